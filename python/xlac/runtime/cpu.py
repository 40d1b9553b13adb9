"""Calling code JIT-compiled for the host CPU by MLIR's ExecutionEngine.

The entry function uses the bare-pointer ABI: one pointer per argument, then
one per result (the results were turned into out-parameters), so a call is
a packed array of pointers to pointers and nothing else.
"""

from __future__ import annotations

import ctypes
import ctypes.util

from xlac.errors import CompileError, collect_diagnostics, compile_error_from
from xlac.mlir import ExecutionEngine, ir

_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _runtime_libraries() -> list[str]:
    # libm resolves tanh, erf, atan2 ... that convert-math-to-libm calls.
    found = ctypes.util.find_library("m")
    return [found] if found else []


class CpuFunction:
    """One JIT-compiled entry point; call it with raw data pointers."""

    def __init__(self, module: ir.Module, entry: str, opt_level: int = 3):
        ctx = module.context
        with ctx, collect_diagnostics(ctx) as diags:
            try:
                self._engine = ExecutionEngine(module, opt_level=opt_level)
            except (RuntimeError, ir.MLIRError) as exc:
                raise compile_error_from(exc, diags, "the LLVM JIT rejected the module") from None
        address = self._engine.raw_lookup(entry)
        if not address:
            raise CompileError(f"<unknown>: error: the JIT has no function '{entry}'")
        self._function = _PACKED(address)

    def __call__(self, pointers: list[int]) -> None:
        """Call with the data pointers of every input, then every output."""
        slots = (ctypes.c_void_p * len(pointers))(*pointers)
        packed = (ctypes.c_void_p * len(pointers))(
            *[ctypes.addressof(slots) + i * ctypes.sizeof(ctypes.c_void_p)
              for i in range(len(pointers))])
        self._function(packed)
