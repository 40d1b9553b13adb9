"""xla-split-alloc-deallocs: a dealloc of many fresh allocations becomes one dealloc each."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class SplitAllocDeallocs(ModulePass):
    """Split a `bufferization.dealloc` that retains nothing and frees only
    results of `memref.alloc` into one dealloc per buffer, each with its
    condition. Run between ownership-based-buffer-deallocation and
    buffer-deallocation-simplification (the parts of
    buffer-deallocation-pipeline).

    Why: ownership-based deallocation frees a block's buffers in one dealloc
    at its end; the simplification asks, for every pair of its buffers,
    whether they may alias, so a function of 2,000 kernel calls (2,000
    temporaries) took 0.55 s there, quadratic in the calls. Distinct
    allocations never alias, which is what the simplification would have
    proved pair by pair. Example:

        bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf32>) if (%c, %d)
      ->
        bufferization.dealloc (%a : memref<4xf32>) if (%c)
        bufferization.dealloc (%b : memref<8xf32>) if (%d)
    """

    name = "xla-split-alloc-deallocs"

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "bufferization.dealloc" and _splittable(op):
                _split(op)


def _splittable(dealloc: ir.Operation) -> bool:
    """Only fresh allocations (never aliasing each other), nothing retained."""
    if len(dealloc.results):                    # one updated condition per retained value
        return False
    count = len(dealloc.operands) // 2
    memrefs = list(dealloc.operands)[:count]
    return count > 1 and len(set(memrefs)) == count and all(
        isinstance(m.owner, ir.OpView) and m.owner.operation.name == "memref.alloc"
        for m in memrefs)


def _split(dealloc: ir.Operation) -> None:
    count = len(dealloc.operands) // 2
    operands = list(dealloc.operands)
    where = ir.InsertionPoint(dealloc)
    with dealloc.context, dealloc.location:
        for memref, condition in zip(operands[:count], operands[count:]):
            ir.Operation.create("bufferization.dealloc", operands=[memref, condition],
                                attributes={"operandSegmentSizes":
                                            ir.DenseI32ArrayAttr.get([1, 1, 0])}, ip=where)
    dealloc.erase()
