"""xla-check-memory: refuse a program whose buffers cannot fit in memory."""

from __future__ import annotations

import os

from xlac.dtypes import element_bytes
from xlac.errors import ResourceLimitError
from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, functions, module_ops
from xlac.record import record


@record
class CheckMemory(ModulePass):
    """Fail, naming the sizes, when a program's buffers cannot fit in
    `memory-bytes` (0: this machine's physical memory).

    Why: generated code allocates its temporaries with `malloc` and has no
    way to report a failure (the entry function's C ABI returns nothing),
    so a buffer larger than memory ran as a SIGSEGV on a NULL pointer (or
    the OOM killer). Shapes are static when xlac compiles (a shape-
    polymorphic program is compiled per call shape), so the sizes are known
    here. What is counted is a lower bound of what any run needs: the entry
    function's arguments and results (the caller holds them all) plus the
    largest single temporary buffer; a program over it cannot run, one
    under it may still exhaust memory with many temporaries alive at once.

        %alloc = memref.alloc() : memref<100000x100000xf32>
      -> error: this program needs at least 37.3 GiB of memory ...
    """

    name = "xla-check-memory"
    keeps_ops = True                 # a check: it changes nothing, its walk is shared
    memory_bytes: int = 0

    def run(self, module: ir.Operation) -> None:
        limit = self.memory_bytes or os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        boundary = sum(_bytes(t) for func in functions(module) if _public(func)
                       for t in _boundary_types(func))
        largest, where = 0, module.location
        for op in module_ops(module):
            if op.name in ("memref.alloc", "memref.alloca"):
                size = _bytes(op.results[0].type)
                if size > largest:
                    largest, where = size, op.location
        if boundary + largest > limit:
            raise PassFailure(where, (
                f"this program needs at least {_size(boundary + largest)} of memory (arguments "
                f"and results: {_size(boundary)}; its largest temporary buffer, here: "
                f"{_size(largest)}), but this machine has {_size(limit)}"), kind=ResourceLimitError)


def _public(func: ir.Operation) -> bool:
    visibility = func.attributes["sym_visibility"] if "sym_visibility" in func.attributes \
        else None
    return visibility is None or ir.StringAttr(visibility).value == "public"


def _boundary_types(func: ir.Operation) -> list[ir.Type]:
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    return list(ftype.inputs) + list(ftype.results)


def _bytes(type_: ir.Type) -> int:
    """The size of a static memref (0 for a dynamic one: checked by no one here)."""
    if not isinstance(type_, ir.MemRefType) or not type_.has_static_shape:
        return 0
    count = 1
    for dim in type_.shape:
        count *= dim
    return count * (element_bytes(type_.element_type) or 1)   # no width (a vector): a byte, a lower bound


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"
