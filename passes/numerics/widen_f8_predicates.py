"""xla-widen-f8-predicates: is_finite of an f8 value asked of its f32 value."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class WidenF8Predicates(ModulePass):
    """Give each `is_finite` of an f8 tensor the operand converted to f32.

    Why: upstream lowers `is_finite` as `|x| != inf` in the operand's type;
    the FN and FNUZ f8 formats have no inf, the constant becomes their NaN,
    and every element came out not finite. In f32 (exact for every f8
    value; an f8 NaN stays NaN) the compare is right for every format.

        %f = stablehlo.is_finite %x : (tensor<4xf8E4M3FN>) -> tensor<4xi1>
      ->
        %w = stablehlo.convert %x : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
        %f = stablehlo.is_finite %w : (tensor<4xf32>) -> tensor<4xi1>
    """

    name = "xla-widen-f8-predicates"

    acts_on = frozenset({"stablehlo.is_finite"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.is_finite" and _is_f8(op.operands[0].type):
                _widen(op)


def _is_f8(value_type: ir.Type) -> bool:
    element = ir.RankedTensorType(value_type).element_type
    return isinstance(element, ir.FloatType) and ir.FloatType(element).width == 8


def _widen(op: ir.Operation) -> None:
    tensor = ir.RankedTensorType(op.operands[0].type)
    with ir.InsertionPoint(op), op.location:
        wide_type = ir.RankedTensorType.get(tensor.shape, ir.F32Type.get())
        wide = ir.Operation.create("stablehlo.convert", results=[wide_type],
                                   operands=[op.operands[0]]).result
    op.operands[0] = wide
