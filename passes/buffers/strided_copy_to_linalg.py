"""xla-strided-copy-to-linalg: copies between strided memrefs as linalg.copy."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, nested_ops


@dataclass(frozen=True)
class StridedCopyToLinalg(ModulePass):
    """Rewrite `memref.copy` with a non-identity layout into `linalg.copy`.

    Why: finalize-memref-to-llvm turns such copies into calls to `memrefCopy`
    from MLIR's C runner library, which the JIT does not have (and an AOT
    library should not need). As linalg.copy they become plain loops.
    Contiguous copies are left alone: they become one memcpy.
    """

    name = "xla-strided-copy-to-linalg"

    def run(self, module: ir.Operation) -> None:
        linalg = dialect("linalg")

        for op in nested_ops(module):
            if op.name != "memref.copy" or not _is_strided(op):
                continue
            with ir.InsertionPoint(op), op.location:
                linalg.copy(op.operands[0], outs=[op.operands[1]])
            op.erase()


def _is_strided(copy: ir.Operation) -> bool:
    return not all(_is_contiguous(ir.MemRefType(v.type)) for v in copy.operands)


def _is_contiguous(memref: ir.MemRefType) -> bool:
    strides, _ = memref.get_strides_and_offset()
    expected, running = [], 1
    for size in reversed(memref.shape):
        expected.append(running)
        running *= size
    return list(strides) == expected[::-1]
