"""xla-widen-narrow-iotas: a long iota of a narrow float counted in f32."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class WidenNarrowIotas(ModulePass):
    """Give each `iota` of a float type narrower than 32 bits whose counted
    dim is longer than that width's signed integers reach the f32 iota,
    converted once.

    Why: upstream lowers a float iota as its index cast to the signed
    integer of the float's width, then converted: an f16 or bf16 iota of
    70,000 counted -32,768 after 32,767 (and 4,464 at its end, where the
    interpreter has inf for f16 and 70,144 for bf16), an f8E4M3FN one of 300
    -128 after 127. In f32 every index up to 2^24 is exact and the one convert
    rounds as the interpreter's does. Shorter iotas keep the narrow
    integer (no f32 vector to pack back).

        %i = stablehlo.iota dim = 1 : tensor<2x70000xf16>
      ->
        %w = stablehlo.iota dim = 1 : tensor<2x70000xf32>
        %i = stablehlo.convert %w : (tensor<2x70000xf32>) -> tensor<2x70000xf16>
    """

    name = "xla-widen-narrow-iotas"

    acts_on = frozenset({"stablehlo.iota"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.iota" and _wraps(op):
                _widen(op)


def _wraps(op: ir.Operation) -> bool:
    tensor = ir.RankedTensorType(op.result.type)
    element = tensor.element_type
    if not isinstance(element, ir.FloatType) or ir.FloatType(element).width >= 32:
        return False
    dim = ir.IntegerAttr(op.attributes["iota_dimension"]).value
    return tensor.shape[dim] - 1 > (1 << (ir.FloatType(element).width - 1)) - 1


def _widen(op: ir.Operation) -> None:
    tensor = ir.RankedTensorType(op.result.type)
    with ir.InsertionPoint(op), op.location:
        wide_type = ir.RankedTensorType.get(tensor.shape, ir.F32Type.get())
        wide = ir.Operation.create("stablehlo.iota", results=[wide_type],
                                   attributes={"iota_dimension": op.attributes["iota_dimension"]}).result
        narrow = ir.Operation.create("stablehlo.convert", results=[op.result.type],
                                     operands=[wide]).result
    op.result.replace_all_uses_with(narrow)
    op.erase()
