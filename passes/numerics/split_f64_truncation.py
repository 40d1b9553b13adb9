"""xla-split-f64-truncation: f64 -> f16/bf16 converts as two steps via f32."""

from __future__ import annotations

from xlac.dtypes import tensor_type
from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.helper_calls import fresh_symbol, replace_with_call

_HALF_TYPES = ("f16", "bf16")


class SplitF64Truncation(ModulePass):
    """Rewrite `stablehlo.convert` f64 -> f16/bf16 as f64 -> f32 rounded to
    odd, then f32 -> f16/bf16.

    Why: LLVM lowers a direct f64 -> f16/bf16 `fptrunc` to the compiler-rt
    calls `__truncdfhf2`/`__truncdfbf2`, which the JIT cannot find (the
    program fails to load). Two plain roundings would round twice
    (1 + 2^-11 + 2^-40 would go to 1 + 2^-11, then tie to even 1.0); rounding
    the first step to odd (an inexact result gets its last bit set) keeps the
    information the second rounding needs, so the result is the correctly
    rounded one, as XLA and the interpreter give. NaN stays NaN, overflow
    still goes to infinity.

        %h = stablehlo.convert %x : (tensor<4xf64>) -> tensor<4xf16>
      ->
        %h = call @xla_f64_to_f16_0(%x)   // round to odd to f32, then to f16
    """

    name = "xla-split-f64-truncation"

    acts_on = frozenset({"stablehlo.convert"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.convert" and _is_f64_to_half(op):
                target = ir.RankedTensorType(op.results[0].type).element_type
                name = fresh_symbol(module, f"xla_f64_to_{target}")
                replace_with_call(module, op, _helper_text(op, name), name)


def _is_f64_to_half(op: ir.Operation) -> bool:
    source, result = op.operands[0].type, op.results[0].type
    if not (isinstance(source, ir.RankedTensorType) and isinstance(result, ir.RankedTensorType)):
        return False
    return (str(ir.RankedTensorType(source).element_type) == "f64"
            and str(ir.RankedTensorType(result).element_type) in _HALF_TYPES)


def _helper_text(op: ir.Operation, name: str) -> str:
    source = ir.RankedTensorType(op.operands[0].type)
    result = ir.RankedTensorType(op.results[0].type)
    f32, i32, i1 = (tensor_type(source.shape, e) for e in ("f32", "i32", "i1"))
    return f"""
func.func private @{name}(%x: {source}) -> {result} {{
  %nearest = stablehlo.convert %x : ({source}) -> {f32}
  %back = stablehlo.convert %nearest : ({f32}) -> {source}
  %inexact = stablehlo.compare NE, %back, %x, FLOAT : ({source}, {source}) -> {i1}
  %back_abs = stablehlo.abs %back : {source}
  %x_abs = stablehlo.abs %x : {source}
  %away = stablehlo.compare GT, %back_abs, %x_abs, FLOAT : ({source}, {source}) -> {i1}
  %bits = stablehlo.bitcast_convert %nearest : ({f32}) -> {i32}
  %one = stablehlo.constant dense<1> : {i32}
  %smaller = stablehlo.subtract %bits, %one : {i32}
  %toward_zero = stablehlo.select %away, %smaller, %bits : {i1}, {i32}
  %odd = stablehlo.or %toward_zero, %one : {i32}
  %odd_bits = stablehlo.select %inexact, %odd, %bits : {i1}, {i32}
  %narrow = stablehlo.bitcast_convert %odd_bits : ({i32}) -> {f32}
  %r = stablehlo.convert %narrow : ({f32}) -> {result}
  return %r : {result}
}}
"""
