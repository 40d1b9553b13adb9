"""xla-rewrite-reduce-windows: prefix sums as scans, padding made explicit."""

from __future__ import annotations

from xlac.dtypes import is_element_type, numpy_dtype
from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops, nested_ops
from xlac.passes.helper_calls import LOWERED_FROM, fresh_symbol, replace_with_call
from xlac.passes.lower.builders.window_text import LOGADDEXP, blocked_scan_text, padded_text
from xlac.record import record

_COMBINERS = ("stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum",
              "stablehlo.and", "stablehlo.or")

# jax's logaddexp body (`lax.cumlogsumexp`), op by op: (name, operands as
# indices: -1 and -2 the block's arguments a and b, k >= 0 the k-th op's result)
_LOGADDEXP_BODY = (("stablehlo.maximum", (-1, -2)), ("stablehlo.subtract", (-1, -2)),
                   ("stablehlo.compare", (1, 1)), ("stablehlo.add", (-1, -2)),
                   ("stablehlo.abs", (1,)), ("stablehlo.negate", (4,)),
                   ("stablehlo.exponential", (5,)), ("stablehlo.log_plus_one", (6,)),
                   ("stablehlo.add", (0, 7)), ("stablehlo.select", (2, 3, 8)),
                   ("stablehlo.return", (9,)))


@record
class RewriteReduceWindows(ModulePass):
    """Rewrite two kinds of single-input `stablehlo.reduce_window`:

    - a window spanning a whole dim, padded by n-1 on one side, from the
      combiner's identity (what `jnp.cumsum`, `cumprod`, `cummax` export), is
      a prefix (or suffix) scan: O(n) elementwise steps instead of n-element
      windows per element (O(n^2), scalar), in blocks of 16 combined in the
      order XLA's CPU backend combines them, so the results round as XLA's;
    - a padded window (a 'SAME' max pool) gets its padding as an explicit
      `stablehlo.pad` by the init value, so upstream lowers it to a named
      `linalg.pooling_*` op, which the CPU schedules vectorize.

    The body must be one associative op (add, multiply, max, min, and, or),
    or jax's logaddexp (`lax.cumlogsumexp`, identity -inf), which scans as the
    same blocks with its whole body a combine step (512x512 f32 down dim 0:
    7.8 s as n-element windows, O(n^2) exps and logs).
    f8 scans too (their init the identity in the f8 type, `_narrow_identity`):
    each combine rounds to f8 as XLA's f16 add then convert does, so an f8
    cumsum is XLA's bit for bit (one by one, the interpreter's order, an
    f8E4M3FN cumsum of 300 differed from XLA's in 75% of its elements).
    Example: reduce_window(x: 256x1024, window [1, 1024], padding [[0, 0],
    [1023, 0]], add) scans 64 blocks of 16, then the 64 block totals (4
    blocks of 16, then 4 totals), and adds each block's preceding total.

    `rows=false` (the CUDA pipeline) keeps a sum along short rows as the
    transposed copy's scan; the CPU's scans it 8 rows at a time in place
    (row_scan_text.py), vector transfers its GPU lowering does not take.
    """

    name = "xla-rewrite-reduce-windows"
    rows: bool = True

    acts_on = frozenset({"stablehlo.reduce_window"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.reduce_window" and len(op.results) == 1:
                _rewrite(module, op, self.rows)


def _ints(op: ir.Operation, name: str, default: int, rank: int) -> list[int]:
    if name not in op.attributes:
        return [default] * rank
    return [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[name])]


def _padding(op: ir.Operation, rank: int) -> list[tuple[int, int]]:
    if "padding" not in op.attributes:
        return [(0, 0)] * rank
    flat = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["padding"])]
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(rank)]


def _combiner(op: ir.Operation) -> str | None:
    body = [inner.operation for inner in op.regions[0].blocks[0].operations]
    args = list(op.regions[0].blocks[0].arguments)
    if _is_logaddexp(body, args):
        return LOGADDEXP
    if len(body) != 2 or body[0].name not in _COMBINERS or list(body[0].operands) != args:
        return None
    return body[0].name


def _is_logaddexp(body: list[ir.Operation], args: list[ir.Value]) -> bool:
    """Whether ``body`` is jax's logaddexp of its two arguments, op for op
    (the NaN check a compare NE of the difference with itself)."""
    if len(body) != len(_LOGADDEXP_BODY) or len(args) != 2:
        return False
    for inner, (name, wanted) in zip(body, _LOGADDEXP_BODY):
        values = [args[-1 - k] if k < 0 else body[k].results[0] for k in wanted]
        if inner.name != name or list(inner.operands) != values:
            return False
    direction = str(body[2].attributes["comparison_direction"])
    return "NE" in direction and not isinstance(ir.RankedTensorType(args[0].type).element_type,
                                                ir.ComplexType)


def _rewrite(module: ir.Operation, op: ir.Operation, rows: bool) -> None:
    source = ir.RankedTensorType(op.operands[0].type)
    combine = _combiner(op)
    if combine is None or not source.has_static_shape or "complex" in str(source.element_type):
        return                    # complex sums: the order of a scan changes their rounding
    shape, rank, element = list(source.shape), source.rank, str(source.element_type)
    window = _ints(op, "window_dimensions", 1, rank)
    strides = _ints(op, "window_strides", 1, rank)
    dilations = _ints(op, "window_dilations", 1, rank)
    if any(d != 1 for d in _ints(op, "base_dilations", 1, rank)):
        return
    padding = _padding(op, rank)
    name = fresh_symbol(module, "xla_window")
    scanned = [d for d in range(rank) if window[d] != 1]
    plain = all(d == 1 for d in strides + dilations)
    if plain and len(scanned) == 1 and _init_is_identity(op, combine) and \
            _is_scan(shape[scanned[0]], window[scanned[0]], padding, scanned[0]):
        dim = scanned[0]
        text = blocked_scan_text(name, shape, element, dim, combine, reverse=padding[dim][1] > 0,
                                 rows=rows)
        _, added = replace_with_call(module, op, text, name)
        _untag_row_scans(added.values())
    elif any(p != (0, 0) for p in padding) and all(lo >= 0 and hi >= 0 for lo, hi in padding):
        padded = [n + lo + hi for n, (lo, hi) in zip(shape, padding)]
        attrs = ", ".join(f"{key} = array<i64: {', '.join(map(str, values))}>" for key, values in
                          (("window_dimensions", window), ("window_strides", strides),
                           ("window_dilations", dilations)))
        result = list(ir.RankedTensorType(op.results[0].type).shape)
        replace_with_call(module, op, padded_text(name, shape, padded, result, element, padding,
                                                  attrs, combine), name)


def _untag_row_scans(helpers) -> None:
    """A row scan's loops (row_scan_text.py) are vector code, one row a lane:
    not the scalar loops `replace_with_call` tags for the unscheduled remark."""
    for helper in helpers:
        for inner in nested_ops(helper):
            if inner.name == "scf.forall" and LOWERED_FROM in inner.attributes and \
                    any(o.name == "vector.transfer_read" for o in nested_ops(inner)):
                del inner.attributes[LOWERED_FROM]


def is_scan_window(op: ir.Operation) -> bool:
    """Whether ``op``'s window shape is one this pass rewrites as a scan (one
    windowed dim, all of it, padded by n-1 on one side; plain strides), its
    element type and init aside: xla-complex-as-pairs asks it of a complex
    window, whose parts' f32 scans are what it would become."""
    shape = list(ir.RankedTensorType(op.operands[0].type).shape)
    rank = len(shape)
    window = _ints(op, "window_dimensions", 1, rank)
    others = _ints(op, "window_strides", 1, rank) + _ints(op, "window_dilations", 1, rank) + \
        _ints(op, "base_dilations", 1, rank)
    scanned = [d for d in range(rank) if window[d] != 1]
    return all(d == 1 for d in others) and len(scanned) == 1 and \
        _is_scan(shape[scanned[0]], window[scanned[0]], _padding(op, rank), scanned[0])


def _init_is_identity(op: ir.Operation, combine: str) -> bool:
    """Whether ``op``'s init is the combiner's identity: then the padding it
    means can be anywhere in a scan, and the scan needs no init of its own."""
    init = op.operands[1].owner
    while hasattr(init, "name") and init.name in ("stablehlo.broadcast_in_dim", "stablehlo.reshape"):
        init = init.operands[0].owner               # jax broadcasts the scalar to a scalar
    if not hasattr(init, "name") or init.name != "stablehlo.constant":
        return False
    value = ir.DenseElementsAttr(init.attributes["value"])
    wanted = identity_of(combine, ir.RankedTensorType(init.results[0].type).element_type)
    return wanted is not None and value.is_splat and _scalar(value.get_splat_value()) == wanted


def identity_of(combine: str, element: ir.Type) -> float | int | bool | None:
    """The value ``x combine identity == x`` holds for, in ``element``."""
    if isinstance(element, ir.IntegerType):
        width, unsigned = element.width, element.is_unsigned or element.width == 1
        low, high = (0, (1 << width) - 1) if unsigned else (-(1 << (width - 1)), (1 << (width - 1)) - 1)
        table = {"stablehlo.add": 0, "stablehlo.multiply": 1, "stablehlo.maximum": low,
                 "stablehlo.minimum": high, "stablehlo.or": 0, "stablehlo.and": -1 if not unsigned
                 else high}
        value = table.get(combine)
        return bool(value) if width == 1 and value is not None else value
    if isinstance(element, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
        return {"stablehlo.add": 0.0, "stablehlo.multiply": 1.0, "stablehlo.maximum": float("-inf"),
                "stablehlo.minimum": float("inf"), LOGADDEXP: float("-inf")}.get(combine)
    # f8E8M0FNU has no zero and no sign: no sum or max to scan. f4 and f6
    # are left as they were: their cumsum fails to lower to LLVM either way.
    if isinstance(element, ir.FloatType) and str(element).startswith("f8") \
            and is_element_type(str(element)) and str(element) != "f8E8M0FNU":
        return _narrow_identity(combine, str(element))
    return None


def _narrow_identity(combine: str, element: str) -> float | None:
    """The identity in an f8 type (jax's init for its cumsum,
    cumprod, cummax, cummin): the extreme of max and min is an infinity where
    the type has one, else its largest finite value (f8E4M3FN: 448). Scanned
    in blocks (XLA's order), each combine rounded to the type, such a scan
    rounds as XLA's, which adds in f16 and rounds each sum to the type again
    (exact: f16 holds over 2p+2 bits of a p-bit f8 significand)."""
    import ml_dtypes
    import numpy as np
    dtype = numpy_dtype(element)
    has_inf = bool(np.isinf(np.float64(np.inf).astype(dtype)))
    largest = float("inf") if has_inf else float(ml_dtypes.finfo(dtype).max)
    return {"stablehlo.add": 0.0, "stablehlo.multiply": 1.0, "stablehlo.maximum": -largest,
            "stablehlo.minimum": largest}.get(combine)


def _scalar(attribute: ir.Attribute) -> float | int | bool:
    if isinstance(attribute, ir.FloatAttr):
        return ir.FloatAttr(attribute).value
    value = ir.IntegerAttr(attribute).value
    return bool(value) if ir.IntegerType(attribute.type).width == 1 else value


def _is_scan(n: int, window: int, padding, dim: int) -> bool:
    others = all(p == (0, 0) for d, p in enumerate(padding) if d != dim)
    return others and window == n and n > 1 and padding[dim] in ((n - 1, 0), (0, n - 1))
