"""gpu.modules (LLVM + NVVM dialect) -> one PTX text for sm_90, and ptxas.

torch-mlir's LLVM has no NVPTX backend, llvmlite's LLVM 22 does: each
kernel is translated to LLVM IR text by MLIR, made LLVM-22 readable
(``xlac.targets.cuda.llvm_compat``), renamed after its gpu.module (outlining names
every kernel ``main_kernel``), linked into one module with libdevice (for
``__nv_expf`` and friends), optimized at O3 and printed as PTX
(``xlac.targets.cuda.nvptx``, in a worker process: ``ptx_isolation``). The driver
JIT-compiles that PTX at load time, so any driver >= R520 runs it.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from xlac.errors import CompileError, error, format_location
from xlac.mlir import ir, translate_to_llvm_ir
from xlac.targets.cuda.llvm_compat import llvm24_to_llvm22
from xlac.targets.cuda.nvptx import ARCH, wheel_file

__all__ = ["ARCH", "kernel_modules", "module_ptx", "ptxas", "shared_kernels", "to_ptx", "wheel_file"]


def kernel_modules(module: ir.Module) -> dict[str, str]:
    """gpu.module name -> the LLVM IR text of its kernel (LLVM 22 syntax)."""
    kernels = {}
    for op in module.body.operations:
        if op.operation.name == "gpu.module":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            # cloned, not printed and parsed: printing a nested op numbers
            # the whole module each time (quadratic: 18 s for 300 kernels)
            fresh = ir.Module.create(loc=op.location)
            with ir.InsertionPoint(fresh.body):
                for inner in op.regions[0].blocks[0].operations:
                    inner.operation.clone()
            _check_translatable(fresh, name)
            kernels[name] = llvm24_to_llvm22(translate_to_llvm_ir(fresh.operation))
    return kernels


def module_ptx(module: ir.Module) -> str:
    """The PTX of ``module`` at the "gpu" stage (its "ptx" stage's text)."""
    return to_ptx(shared_kernels(kernel_modules(module))[0])


def shared_kernels(kernels: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The distinct kernels of ``kernels`` (gpu.module name -> LLVM IR text),
    each under the first name it has, and every name -> that name: a layer
    repeated N times makes N identical gpu.modules, compiled once (a 500-op
    transpose/dot chain: 741 kernels, 5 distinct; BERT 152, 43)."""
    first: dict[str, str] = {}
    canonical = {name: first.setdefault(text, name) for name, text in kernels.items()}
    return {name: kernels[name] for name in first.values()}, canonical


def _check_translatable(kernel: ir.Module, name: str) -> None:
    """Refuse, as a CompileError, what would make the LLVM translation abort the process."""
    left = []

    def visit(op):
        if not op.name.startswith(("llvm.", "nvvm.", "builtin.module")):
            left.append(op)
        return ir.WalkResult.ADVANCE

    kernel.operation.walk(visit)
    if left:
        op = left[0]
        raise CompileError(error(f"kernel {name} still has "
                           f"'{op.name}' after lowering to NVVM; this program is not supported "
                           "on cuda yet", format_location(op.location)))


def to_ptx(kernels: dict[str, str]) -> str:
    """One PTX text whose entries are named after the gpu.modules, made in the
    cached NVPTX worker (``xlac.targets.cuda.ptx_isolation``): LLVM's code
    generator aborts the process on what it cannot select."""
    from xlac.targets.cuda.ptx_isolation import isolated_ptx
    return isolated_ptx(kernels)


def ptxas(ptx: str, arch: str = ARCH) -> str:
    """Assemble ``ptx`` with the wheel's ptxas (validation); its report, or CompileError."""
    tool = wheel_file("bin/ptxas")
    if tool is None:
        raise FileNotFoundError("ptxas not found: pip install 'xlac[cuda]'")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "k.ptx")
        source.write_text(ptx)
        done = subprocess.run([str(tool), "-v", "-O3", f"-arch={arch}", str(source), "-o",
                               str(Path(tmp, "k.cubin"))], capture_output=True, text=True)
    if done.returncode != 0:
        raise CompileError(error(f"ptxas rejected the PTX: {done.stderr.strip()}"))
    return done.stderr
