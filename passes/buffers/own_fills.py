"""xla-own-fills: each op writing into a shared linalg.fill gets a fill of its own."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

_NOT_WRITERS = ("linalg.fill", "linalg.index", "linalg.yield")


class OwnFills(ModulePass):
    """Before bufferization, give each linalg op whose init is a `linalg.fill`
    that other ops also write into a clone of that fill, right before it.

    Why: CSE merges equal fills (an MLP's two matmuls start from one zero
    tensor). One-shot bufferization then fills one buffer and copies it for
    every user but the last: on the CUDA target a fill kernel plus a device
    copy per matmul, where a fill of its own folds into the matmul's kernel
    (it starts from the constant: no launch, no pass over memory).

        %z = linalg.fill ins(%c0) outs(%e)
        %a = linalg.matmul ins(...) outs(%z)
        %b = linalg.matmul ins(...) outs(%z)
      ->
        %z0 = linalg.fill ins(%c0) outs(%e)
        %a = linalg.matmul ins(...) outs(%z0)
        %b = linalg.matmul ins(...) outs(%z)
    """

    name = "xla-own-fills"

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name.startswith("linalg.") and op.name not in _NOT_WRITERS and op.results \
                    and len(op.operands):
                own_fill(op)


def own_fill(op: ir.Operation, always: bool = False) -> ir.Operation | None:
    """Give ``op`` a clone of the fill its init is, if others use that fill too
    (or ``always``); the clone, or None."""
    init = op.operands[len(op.operands) - 1].owner
    if not isinstance(init, ir.OpView) or init.name != "linalg.fill":
        return None
    if not always and len(list(init.results[0].uses)) < 2:
        return None
    fresh = init.operation.clone(ip=ir.InsertionPoint(op))
    op.operands[len(op.operands) - 1] = fresh.results[0]
    return fresh
