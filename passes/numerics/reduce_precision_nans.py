"""xla-reduce-precision-nans: reduce_precision to no mantissa bits turns NaN into inf."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.helper_calls import fresh_symbol, replace_with_call

_INF = {"f16": "0x7C00", "bf16": "0x7F80", "f32": "0x7F800000", "f64": "0x7FF0000000000000"}


class ReducePrecisionNans(ModulePass):
    """Give `reduce_precision` with `mantissa_bits = 0` an inf where its
    operand is NaN (+inf whatever the NaN's sign, as the interpreter).

    Why: with no mantissa bit a format has no NaN, only inf: XLA rounds the
    bits and a NaN's mantissa is rounded away (its ReducePrecision keeps
    NaNs only when mantissa_bits > 0), and the interpreter agrees;
    upstream's lowering keeps every NaN.

        %r = stablehlo.reduce_precision %x, format = e5m0 : tensor<4xf32>
      ->
        %r = call @xla_reduce_precision_0(%x)   // select(x != x, inf, e5m0(x))
    """

    name = "xla-reduce-precision-nans"

    acts_on = frozenset({"stablehlo.reduce_precision"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if (op.name == "stablehlo.reduce_precision"
                    and str(ir.RankedTensorType(op.results[0].type).element_type) in _INF
                    and ir.IntegerAttr(op.attributes["mantissa_bits"]).value == 0):
                name = fresh_symbol(module, "xla_reduce_precision")
                replace_with_call(module, op, _text(op, name), name)


def _text(op: ir.Operation, name: str) -> str:
    tensor = ir.RankedTensorType(op.results[0].type)
    t = str(tensor)
    booleans = t.replace(str(tensor.element_type) + ">", "i1>")
    exponent = ir.IntegerAttr(op.attributes["exponent_bits"]).value
    return f"""
func.func private @{name}(%x: {t}) -> {t} {{
  %r = stablehlo.reduce_precision %x, format = e{exponent}m0 : {t}
  %nan = stablehlo.compare NE, %x, %x : ({t}, {t}) -> {booleans}
  %inf = stablehlo.constant dense<{_INF[str(tensor.element_type)]}> : {t}
  %y = stablehlo.select %nan, %inf, %r : {booleans}, {t}
  return %y : {t}
}}
"""
