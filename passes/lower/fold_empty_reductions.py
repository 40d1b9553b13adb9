"""xla-fold-empty-reductions: a reduce over no elements is its init value."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class FoldEmptyReductions(ModulePass):
    """Replace a `stablehlo.reduce` whose inputs have no elements by its init
    values broadcast to the result shapes.

    Why: upstream stablehlo-legalize-to-linalg leaves a reduce of a
    zero-size tensor unlowered (`tensor<2x0xf32>` over dimension 1), and
    reducing nothing gives the init value in every result element (an empty
    result stays empty), as XLA does.

        %r = stablehlo.reduce(%x init: %c) applies stablehlo.add
               across dimensions = [1] : (tensor<2x0xf32>, tensor<f32>) -> tensor<2xf32>
      ->
        %r = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<2xf32>
    """

    name = "xla-fold-empty-reductions"

    acts_on = frozenset({"stablehlo.reduce"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.reduce" and _has_no_elements(op.operands[0].type):
                _replace_by_inits(op)


def _has_no_elements(type_: ir.Type) -> bool:
    return isinstance(type_, ir.RankedTensorType) and \
        0 in ir.RankedTensorType(type_).shape


def _replace_by_inits(op: ir.Operation) -> None:
    count = len(op.results)
    inits = list(op.operands)[count:]
    with ir.InsertionPoint(op), op.location:
        for result, init in zip(list(op.results), inits):
            broadcast = ir.Operation.create(
                "stablehlo.broadcast_in_dim", results=[result.type], operands=[init],
                attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])})
            result.replace_all_uses_with(broadcast.results[0])
    op.erase()
