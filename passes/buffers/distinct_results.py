"""xla-distinct-results: a buffer returned twice is copied for the second result."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions


class DistinctResults(ModulePass):
    """Give each result of a public function its own buffer: the second and
    later uses of one value in `func.return` return a fresh copy of it.

    Why: a program may return one value twice (`return %v, %v`), and upstream
    buffer-results-to-out-params{hoist-static-allocs} then replaces the one
    allocation by two out-parameters and crashes the process. Each result is
    also a separate caller-owned array, so it needs its own storage anyway.

        return %alloc, %alloc : memref<4xf32>, memref<4xf32>
      ->
        %copy = memref.alloc() : memref<4xf32>
        memref.copy %alloc, %copy : memref<4xf32> to memref<4xf32>
        return %alloc, %copy : memref<4xf32>, memref<4xf32>
    """

    name = "xla-distinct-results"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            if func.regions[0].blocks:
                for block in func.regions[0].blocks:
                    _copy_repeated(list(block.operations)[-1])


def _copy_repeated(terminator: ir.Operation) -> None:
    if terminator.name != "func.return":
        return
    seen = set()
    for index, value in enumerate(list(terminator.operands)):
        if value not in seen or not isinstance(value.type, ir.MemRefType):
            seen.add(value)
            continue
        terminator.operands[index] = _copy_before(terminator, value)


def _copy_before(op: ir.Operation, value: ir.Value) -> ir.Value:
    if not ir.MemRefType(value.type).has_static_shape:
        return value   # a dynamic buffer's allocation is not hoisted: no crash to avoid
    with ir.InsertionPoint(op), op.location:
        copy = ir.Operation.create(
            "memref.alloc", results=[value.type], operands=[],
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0]),
                        "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64)})
        ir.Operation.create("memref.copy", operands=[value, copy.result])
    return copy.result
