"""xla-expand-complex-ops: complex max/min, bitcast_convert and cbrt in real ops."""

from __future__ import annotations

from xlac.dtypes import tensor_type
from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.helper_calls import fresh_symbol, replace_with_call

# the ops this pass expands when complex numbers flow through them
_EXPANDED = ("stablehlo.maximum", "stablehlo.minimum", "stablehlo.bitcast_convert", "stablehlo.cbrt")


class ExpandComplexOps(ModulePass):
    """Rewrite complex `maximum`/`minimum`, `bitcast_convert` and `cbrt` into
    StableHLO ops on real parts.

    Why: upstream stablehlo-legalize-to-linalg orders complex numbers wrongly
    for maximum/minimum (`re_a >= re_b` wins even when the real parts tie), and
    has no bitcast_convert or cbrt for complex. XLA orders complex numbers
    lexicographically (real part, then imaginary part), and a complex<f32> is
    two f32 in memory, real first (a complex<f64> part holds two words,
    low first):

        %m = stablehlo.maximum %a, %b : tensor<4xcomplex<f32>>
      ->
        %m = call @xla_complex_max_0(%a, %b)  // select(re_a > re_b or
                                               //   re_a == re_b and im_a >= im_b)
        %p = stablehlo.bitcast_convert %c : (tensor<2xcomplex<f64>>)
                                         -> tensor<2x2xcomplex<f32>>
      ->
        %p = call @xla_complex_bitcast_0(%c)  // each f64 part's two f32 words
    """

    name = "xla-expand-complex-ops"

    acts_on = frozenset(_EXPANDED)

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name not in _EXPANDED:     # before the types: printing every op's was this pass's time
                continue
            types = [str(v.type) for v in list(op.operands) + list(op.results)]
            if not any("complex" in t for t in types):
                continue
            if op.name in ("stablehlo.maximum", "stablehlo.minimum"):
                name = fresh_symbol(module, "xla_complex_" + op.name[10:13])
                replace_with_call(module, op, _min_max_text(op, name), name)
            elif op.name == "stablehlo.bitcast_convert":
                _expand_bitcast(module, op)
            elif op.name == "stablehlo.cbrt":
                name = fresh_symbol(module, "xla_complex_cbrt")
                replace_with_call(module, op, _cbrt_text(op, name), name)


def _cbrt_text(op: ir.Operation, name: str) -> str:
    """The principal cube root, as the interpreter: cbrt(|z|) at a third of arg(z)."""
    tensor = ir.RankedTensorType(op.results[0].type)
    part = _t(tensor.shape, str(ir.ComplexType(tensor.element_type).element_type))
    return f"""
func.func private @{name}(%z: {tensor}) -> {tensor} {{
  %re = stablehlo.real %z : ({tensor}) -> {part}
  %im = stablehlo.imag %z : ({tensor}) -> {part}
  %abs = stablehlo.abs %z : ({tensor}) -> {part}
  %radius = stablehlo.cbrt %abs : {part}
  %angle = stablehlo.atan2 %im, %re : {part}
  %three = stablehlo.constant dense<3.0> : {part}
  %third = stablehlo.divide %angle, %three : {part}
  %cos = stablehlo.cosine %third : {part}
  %sin = stablehlo.sine %third : {part}
  %x = stablehlo.multiply %radius, %cos : {part}
  %y = stablehlo.multiply %radius, %sin : {part}
  %r = stablehlo.complex %x, %y : {tensor}
  return %r : {tensor}
}}
"""


def _min_max_text(op: ir.Operation, name: str) -> str:
    tensor = ir.RankedTensorType(op.results[0].type)
    part = _t(tensor.shape, str(ir.ComplexType(tensor.element_type).element_type))
    wins, ties = ("GT", "GE") if op.name == "stablehlo.maximum" else ("LT", "LE")
    boolean = _t(tensor.shape, "i1")
    return f"""
func.func private @{name}(%a: {tensor}, %b: {tensor}) -> {tensor} {{
  %ar = stablehlo.real %a : ({tensor}) -> {part}
  %br = stablehlo.real %b : ({tensor}) -> {part}
  %ai = stablehlo.imag %a : ({tensor}) -> {part}
  %bi = stablehlo.imag %b : ({tensor}) -> {part}
  %real_wins = stablehlo.compare {wins}, %ar, %br : ({part}, {part}) -> {boolean}
  %real_ties = stablehlo.compare EQ, %ar, %br : ({part}, {part}) -> {boolean}
  %imag_wins = stablehlo.compare {ties}, %ai, %bi : ({part}, {part}) -> {boolean}
  %tie_wins = stablehlo.and %real_ties, %imag_wins : {boolean}
  %a_wins = stablehlo.or %real_wins, %tie_wins : {boolean}
  %r = stablehlo.select %a_wins, %a, %b : {boolean}, {tensor}
  return %r : {tensor}
}}
"""


def _expand_bitcast(module: ir.Operation, op: ir.Operation) -> None:
    """StableHLO allows complex -> complex only: the same type (a no-op), or
    complex<f64> <-> pairs of complex<f32> in a new minor dimension."""
    source = ir.RankedTensorType(op.operands[0].type)
    target = ir.RankedTensorType(op.results[0].type)
    if source == target:
        op.results[0].replace_all_uses_with(op.operands[0])
        op.erase()
        return
    if list(target.shape) == list(source.shape) + [2]:
        body = _split(list(source.shape), str(source), str(target))
    elif list(source.shape) == list(target.shape) + [2]:
        body = _join(list(target.shape), str(source), str(target))
    else:
        raise PassFailure(op.location, f"bitcast_convert from {source} to {target} is not "
                          "supported")
    name = fresh_symbol(module, "xla_complex_bitcast")
    text = (f"func.func private @{name}(%x: {source}) -> {target} {{\n  "
            + "\n  ".join(body) + f"\n  return %r : {target}\n}}\n")
    replace_with_call(module, op, text, name)


def _split(shape: list[int], source: str, target: str) -> list[str]:
    """complex<f64> -> 2 x complex<f32>: each f64 part's low and high words
    (little-endian) become the real and imaginary part of one complex<f32>."""
    c32, wide = _t(shape, "complex<f32>"), _t(shape + [1], "complex<f32>")
    lines = []
    for part in ("real", "imag"):
        lines += [f"%{part} = stablehlo.{part} %x : ({source}) -> {_t(shape, 'f64')}",
                  f"%{part}_bits = stablehlo.bitcast_convert %{part} : ({_t(shape, 'f64')}) -> "
                  f"{_t(shape, 'ui64')}",
                  *_words(f"%{part}", shape),
                  f"%{part}_c = stablehlo.complex %{part}_low, %{part}_high : {c32}",
                  f"%{part}_1 = stablehlo.reshape %{part}_c : ({c32}) -> {wide}"]
    return lines + [f"%r = stablehlo.concatenate %real_1, %imag_1, dim = {len(shape)} : "
                    f"({wide}, {wide}) -> {target}"]


def _words(name: str, shape: list[int]) -> list[str]:
    """<name>_low and <name>_high: the f32 words of the ui64 <name>_bits."""
    u64, u32, f32 = _t(shape, "ui64"), _t(shape, "ui32"), _t(shape, "f32")
    return [f"{name}_shift = stablehlo.constant dense<32> : {u64}",
            f"{name}_high64 = stablehlo.shift_right_logical {name}_bits, {name}_shift : {u64}",
            f"{name}_low32 = stablehlo.convert {name}_bits : ({u64}) -> {u32}",
            f"{name}_high32 = stablehlo.convert {name}_high64 : ({u64}) -> {u32}",
            f"{name}_low = stablehlo.bitcast_convert {name}_low32 : ({u32}) -> {f32}",
            f"{name}_high = stablehlo.bitcast_convert {name}_high32 : ({u32}) -> {f32}"]


def _join(shape: list[int], source: str, target: str) -> list[str]:
    """2 x complex<f32> -> complex<f64>, the inverse of ``_split``."""
    c32, u64, f32 = _t(shape, "complex<f32>"), _t(shape, "ui64"), _t(shape, "f32")
    strides = ", ".join(["1"] * (len(shape) + 1))
    lines = []
    for index, part in enumerate(("real", "imag")):
        starts = ", ".join(["0"] * len(shape) + [str(index)])
        limits = ", ".join([str(d) for d in shape] + [str(index + 1)])
        lines += [f'%{part}_s = "stablehlo.slice"(%x) {{start_indices = array<i64: {starts}>, '
                  f"limit_indices = array<i64: {limits}>, strides = array<i64: {strides}>}}"
                  f" : ({source}) -> {_t(shape + [1], 'complex<f32>')}",
                  f"%{part}_c = stablehlo.reshape %{part}_s : "
                  f"({_t(shape + [1], 'complex<f32>')}) -> {c32}"]
        for word in ("real", "imag"):
            lines += [f"%{part}_{word} = stablehlo.{word} %{part}_c : ({c32}) -> {f32}",
                      f"%{part}_{word}_u = stablehlo.bitcast_convert %{part}_{word} : ({f32}) -> "
                      f"{_t(shape, 'ui32')}",
                      f"%{part}_{word}_w = stablehlo.convert %{part}_{word}_u : "
                      f"({_t(shape, 'ui32')}) -> {u64}"]
        lines += [f"%{part}_shift = stablehlo.constant dense<32> : {u64}",
                  f"%{part}_hi = stablehlo.shift_left %{part}_imag_w, %{part}_shift : {u64}",
                  f"%{part}_bits = stablehlo.or %{part}_real_w, %{part}_hi : {u64}",
                  f"%{part} = stablehlo.bitcast_convert %{part}_bits : ({u64}) -> "
                  f"{_t(shape, 'f64')}"]
    return lines + [f"%r = stablehlo.complex %real, %imag : {target}"]


def _t(shape: list[int], element: str) -> str:
    return tensor_type(shape, element)
