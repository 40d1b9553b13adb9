"""The canonical program of each op class in each element type, for the
vector-schedule guard (test_vector_schedules.py).

One small StableHLO function per (class, element type): the op alone, on
shapes big enough (8,192 elements) that xla-apply-schedules must give it a
schedule or say why not. A pair StableHLO does not allow (a sort of complex
numbers: no order; an iota of booleans) is in ``NOT_ALLOWED`` with the rule.
"""

from __future__ import annotations

CLASSES = ("elementwise", "broadcast", "reduce", "reduce_window", "transpose", "dot_general",
           "convolution", "gather", "scatter", "sort", "concatenate", "pad", "slice", "select",
           "convert", "iota", "cumsum")
TYPES = ("f32", "f64", "f16", "bf16", "i8", "i32", "i64", "ui8", "i1", "complex<f32>",
         "complex<f64>")

# (class, type) pairs StableHLO refuses, and the rule that says so
NOT_ALLOWED = {
    **{("sort", c): "compare LT/GT of complex numbers is not defined"
       for c in ("complex<f32>", "complex<f64>")},
    ("iota", "i1"): "iota's result is an integer, float or complex tensor",
}

ROWS, COLS = 64, 128


def program(op_class: str, element: str) -> str:
    """The function ``@main`` of ``op_class`` on ``element`` tensors."""
    return _BUILDERS[op_class](element, f"tensor<{ROWS}x{COLS}x{element}>")


def cases() -> list[tuple[str, str]]:
    return [(c, t) for c in CLASSES for t in TYPES if (c, t) not in NOT_ALLOWED]


def _zero(element: str) -> str:
    if element == "i1":
        return "false"
    if element.startswith("complex"):
        return "(0.0, 0.0)"
    return "0.0" if element[0] in "fb" else "0"


def _add_body(element: str) -> str:
    scalar = f"tensor<{element}>"
    return (f"({{\n  ^bb0(%x: {scalar}, %y: {scalar}):\n"
            f"    %s = stablehlo.add %x, %y : {scalar}\n"
            f"    stablehlo.return %s : {scalar}\n  }})")


def _elementwise(e, t):
    return (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %0 = stablehlo.add %a, %b : {t}\n  return %0 : {t}\n}}")


def _broadcast(e, t):
    return (f"func.func @main(%a: tensor<{COLS}x{e}>) -> {t} {{\n"
            f"  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<{COLS}x{e}>) -> {t}\n"
            f"  return %0 : {t}\n}}")


def _reduce(e, t):
    return (f"func.func @main(%a: {t}) -> tensor<{ROWS}x{e}> {{\n"
            f"  %z = stablehlo.constant dense<{_zero(e)}> : tensor<{e}>\n"
            f"  %0 = stablehlo.reduce(%a init: %z) across dimensions = [1] : "
            f"({t}, tensor<{e}>) -> tensor<{ROWS}x{e}>\n"
            f"    reducer(%x: tensor<{e}>, %y: tensor<{e}>) {{\n"
            f"      %s = stablehlo.add %x, %y : tensor<{e}>\n"
            f"      stablehlo.return %s : tensor<{e}>\n    }}\n"
            f"  return %0 : tensor<{ROWS}x{e}>\n}}")


def _window(e, t, window, padding, out):
    return (f"func.func @main(%a: {t}) -> {out} {{\n"
            f"  %z = stablehlo.constant dense<{_zero(e)}> : tensor<{e}>\n"
            f"  %0 = \"stablehlo.reduce_window\"(%a, %z) {_add_body(e)} {{"
            f"window_dimensions = array<i64: {window}>, padding = dense<{padding}> : tensor<2x2xi64>}}"
            f" : ({t}, tensor<{e}>) -> {out}\n  return %0 : {out}\n}}")


def _reduce_window(e, t):     # a 3x3 sum pool, stride 1, no padding
    return _window(e, t, "3, 3", "[[0, 0], [0, 0]]", f"tensor<{ROWS - 2}x{COLS - 2}x{e}>")


def _cumsum(e, t):            # as jnp.cumsum writes it: a window of the whole row, padded before
    return _window(e, t, f"1, {COLS}", f"[[0, 0], [{COLS - 1}, 0]]", t)


def _transpose(e, t):
    out = f"tensor<{COLS}x{ROWS}x{e}>"
    return (f"func.func @main(%a: {t}) -> {out} {{\n"
            f"  %0 = stablehlo.transpose %a, dims = [1, 0] : ({t}) -> {out}\n"
            f"  return %0 : {out}\n}}")


def _dot_general(e, t):
    b, out = f"tensor<{COLS}x{ROWS}x{e}>", f"tensor<{ROWS}x{ROWS}x{e}>"
    return (f"func.func @main(%a: {t}, %b: {b}) -> {out} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            f"({t}, {b}) -> {out}\n  return %0 : {out}\n}}")


def _convolution(e, t):
    x, w, out = (f"tensor<1x16x16x32x{e}>", f"tensor<3x3x32x32x{e}>", f"tensor<1x14x14x32x{e}>")
    return (f"func.func @main(%x: {x}, %w: {w}) -> {out} {{\n"
            f"  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            f"window = {{stride = [1, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}}"
            f" : ({x}, {w}) -> {out}\n  return %0 : {out}\n}}")


def _gather(e, t):            # rows of a table by index (an embedding lookup)
    ids, out = "tensor<64x1xi32>", f"tensor<64x{COLS}x{e}>"
    return (f"func.func @main(%a: {t}, %i: {ids}) -> {out} {{\n"
            f"  %0 = \"stablehlo.gather\"(%a, %i) {{dimension_numbers = #stablehlo.gather<"
            f"offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, "
            f"slice_sizes = array<i64: 1, {COLS}>}} : ({t}, {ids}) -> {out}\n  return %0 : {out}\n}}")


def _scatter(e, t):           # rows added into a table by index (a segment sum)
    ids, updates = "tensor<64x1xi32>", f"tensor<64x{COLS}x{e}>"
    return (f"func.func @main(%a: {t}, %i: {ids}, %u: {updates}) -> {t} {{\n"
            f"  %0 = \"stablehlo.scatter\"(%a, %i, %u) {_add_body(e)} {{scatter_dimension_numbers = "
            f"#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], "
            f"scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}} : ({t}, {ids}, {updates}) -> {t}\n"
            f"  return %0 : {t}\n}}")


def _sort(e, t):
    return (f"func.func @main(%a: {t}) -> {t} {{\n"
            f"  %0 = \"stablehlo.sort\"(%a) ({{\n  ^bb0(%x: tensor<{e}>, %y: tensor<{e}>):\n"
            f"    %c = stablehlo.compare LT, %x, %y : (tensor<{e}>, tensor<{e}>) -> tensor<i1>\n"
            f"    stablehlo.return %c : tensor<i1>\n  }}) {{dimension = 1 : i64}} : ({t}) -> {t}\n"
            f"  return %0 : {t}\n}}")


def _concatenate(e, t):
    out = f"tensor<{ROWS}x{2 * COLS}x{e}>"
    return (f"func.func @main(%a: {t}, %b: {t}) -> {out} {{\n"
            f"  %0 = stablehlo.concatenate %a, %b, dim = 1 : ({t}, {t}) -> {out}\n"
            f"  return %0 : {out}\n}}")


def _pad(e, t):
    out = f"tensor<{ROWS + 2}x{COLS + 2}x{e}>"
    return (f"func.func @main(%a: {t}) -> {out} {{\n"
            f"  %z = stablehlo.constant dense<{_zero(e)}> : tensor<{e}>\n"
            f"  %0 = stablehlo.pad %a, %z, low = [1, 1], high = [1, 1], interior = [0, 0] : "
            f"({t}, tensor<{e}>) -> {out}\n  return %0 : {out}\n}}")


def _slice(e, t):
    out = f"tensor<{ROWS - 2}x{COLS - 2}x{e}>"
    return (f"func.func @main(%a: {t}) -> {out} {{\n"
            f"  %0 = stablehlo.slice %a [1:{ROWS - 1}, 1:{COLS - 1}] : ({t}) -> {out}\n"
            f"  return %0 : {out}\n}}")


def _select(e, t):
    p = f"tensor<{ROWS}x{COLS}xi1>"
    return (f"func.func @main(%p: {p}, %a: {t}, %b: {t}) -> {t} {{\n"
            f"  %0 = stablehlo.select %p, %a, %b : {p}, {t}\n  return %0 : {t}\n}}")


def _convert(e, t):           # to f32, or from f32 where the type is f32
    target = "i32" if e == "f32" else "f32"
    if e.startswith("complex"):
        target = "complex<f64>" if e == "complex<f32>" else "complex<f32>"
    out = f"tensor<{ROWS}x{COLS}x{target}>"
    return (f"func.func @main(%a: {t}) -> {out} {{\n"
            f"  %0 = stablehlo.convert %a : ({t}) -> {out}\n  return %0 : {out}\n}}")


def _iota(e, t):
    return (f"func.func @main() -> {t} {{\n"
            f"  %0 = stablehlo.iota dim = 1 : {t}\n  return %0 : {t}\n}}")


_BUILDERS = {"elementwise": _elementwise, "broadcast": _broadcast, "reduce": _reduce,
             "reduce_window": _reduce_window, "transpose": _transpose, "dot_general": _dot_general,
             "convolution": _convolution, "gather": _gather, "scatter": _scatter, "sort": _sort,
             "concatenate": _concatenate, "pad": _pad, "slice": _slice, "select": _select,
             "convert": _convert, "iota": _iota, "cumsum": _cumsum}
