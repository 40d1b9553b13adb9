"""The FFT micro-kernels' names and MLIR for the CPU target's kernel library
(xlac.targets.cpu.micro_kernels): the butterfly stages' codelets are the
passes' (xlac.passes.lower.fft_kernel_text), which the targets reach here."""

from __future__ import annotations

PREFIX = "xlac_ukernel_fft_"                 # fft_kernel_text.PREFIX


def is_kernel(name: str) -> bool:
    """Whether ``name`` is an FFT micro-kernel's symbol."""
    if not name.startswith(PREFIX):
        return False
    from xlac.passes.lower.fft_kernel_text import is_kernel as named
    return named(name)


def mlir_text(name: str, level: str) -> str:
    """FFT micro-kernel ``name``'s MLIR for CPU level ``level``."""
    from xlac.passes.lower.fft_kernel_text import mlir_text as text
    return text(name, level)
