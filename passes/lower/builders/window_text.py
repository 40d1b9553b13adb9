"""StableHLO text for the reduce_windows xla-rewrite-reduce-windows rewrites."""

from __future__ import annotations

import math

from xlac.dtypes import tensor_type
from xlac.passes.lower.builders.row_scan_text import row_lanes, row_scan_text
from xlac.passes.lower.builders.ssa_text import SsaText

# XLA's CPU scan (its ReduceWindowRewriter, base length 16): up to 16
# elements combined in order; longer scans in blocks of 16, recursively.
BLOCK = 16

# jax's logaddexp body as a scan's combiner (rewrite_reduce_windows.py)
LOGADDEXP = "xla.logaddexp"


def blocked_scan_text(name: str, shape: list[int], element: str, dim: int, combine: str,
                      reverse: bool, rows: bool = True) -> str:
    """``@name(%x, %init)``: the inclusive prefix (``reverse``: suffix) scan of
    ``%x`` along ``dim``, combined in XLA's CPU order, so the rounding is
    XLA's: up to 16 elements one after the other (a suffix window from its
    first element on); longer, in blocks of 16 scanned so, the blocks' totals
    scanned the same way (recursively), and each block combined with the
    totals before (after) it. ``identity``: the combiner's, as a constant.
    ``rows``: a sum along short rows may scan 8 rows at a time in place."""
    # a sum along short rows: 8 rows at a time, one a lane, read in place
    # (no transposed copy: c128 cumsum 512x1024 inner 11-16 ms -> 2-4)
    if _scans_better_outer(shape, element, dim, combine) and combine == "stablehlo.add" \
            and rows and row_lanes(shape, element, dim):
        float_like = element.startswith(("f", "bf"))
        return row_scan_text(name, shape, element, dim, "arith.addf" if float_like else "arith.addi",
                             "0.0" if float_like else "0", reverse)
    text = SsaText()
    t = tensor_type(shape, element)
    if _scans_better_outer(shape, element, dim, combine):
        out = _scan_outermost(text, shape, element, dim, combine, reverse)
    else:
        out = _scan_merged(text, "%x", shape, element, dim, combine, reverse)
    return (f"func.func private @{name}(%x: {t}, %init: tensor<{element}>) -> {t} {{\n"
            + "\n".join(text.lines) + f"\n  return {out} : {t}\n}}\n")


def _combined(text: SsaText, combine: str, a: str, b: str, t: str, element: str) -> str:
    """``a combine b`` for tensors of type ``t``: one op, or logaddexp's body
    (jax's: max + log1p(exp(-|a - b|)), a + b where a - b is NaN, so that
    -inf with -inf is -inf and a NaN stays NaN)."""
    if combine != LOGADDEXP:
        return text.add(f"{combine} {a}, {b} : {t}")
    flags = t[:t.rindex(element)] + "i1>"
    high = text.add(f"stablehlo.maximum {a}, {b} : {t}")
    gap = text.add(f"stablehlo.subtract {a}, {b} : {t}")
    nan = text.add(f"stablehlo.compare NE, {gap}, {gap}, FLOAT : ({t}, {t}) -> {flags}")
    plain_sum = text.add(f"stablehlo.add {a}, {b} : {t}")
    value = text.add(f"stablehlo.abs {gap} : {t}")
    for step in ("negate", "exponential", "log_plus_one"):
        value = text.add(f"stablehlo.{step} {value} : {t}")
    value = text.add(f"stablehlo.add {high}, {value} : {t}")
    return text.add(f"stablehlo.select {nan}, {plain_sum}, {value} : {flags}, {t}")


def _scans_better_outer(shape, element: str, dim: int, combine: str) -> bool:
    """Whether to scan ``dim`` as the outermost dim of a transposed copy: where
    the dims after it hold fewer elements than a block (the innermost dim, or
    the one before a complex tensor's 2 parts, xla-complex-as-pairs). There
    each of a block's 16 steps reads a column 16 elements apart (no vectors);
    outermost, each step is a whole contiguous row. The transposes move data
    only: every element is combined from the same operands in the same order,
    so a float sum rounds as before, bit for bit (f64 cumsum 512x1024 inner
    1.9x XLA -> the section "Scans of floats down a transposed copy" of
    docs/PERFORMANCE.md)."""
    trailing = 1
    for size in shape[dim + 1:]:
        trailing *= size
    return dim > 0 and trailing < BLOCK and shape[dim] > BLOCK


def _scan_outermost(text: SsaText, shape, element, dim, combine, reverse) -> str:
    order = [dim] + [d for d in range(len(shape)) if d != dim]
    moved = [shape[d] for d in order]
    back = [order.index(d) for d in range(len(shape))]
    value = text.add(f"stablehlo.transpose %x, dims = {order} : ({tensor_type(shape, element)}) "
                     f"-> {tensor_type(moved, element)}")
    value = _scan_merged(text, value, moved, element, 0, combine, reverse)
    return text.add(f"stablehlo.transpose {value}, dims = {back} : ({tensor_type(moved, element)})"
                    f" -> {tensor_type(shape, element)}")


def _scan_merged(text: SsaText, value: str, shape, element, dim, combine, reverse) -> str:
    """``_scan`` with the dims after ``dim`` merged into one: a complex
    tensor's pairs (xla-complex-as-pairs) scan as rows of f32/f64 lanes, not as
    steps whose innermost dim is the 2 parts (each step a kernel of its own,
    c128 cumsum 512x1024 inner: 15 adds of 0.6-0.7 ms where f64's take 0.04).
    A reshape moves no element: each is combined from the same operands in the
    same order, so the sums round as before, bit for bit."""
    if len(shape) - dim <= 2:
        return _scan(text, value, shape, element, dim, combine, reverse)
    merged = shape[:dim + 1] + [math.prod(shape[dim + 1:])]
    value = text.add(f"stablehlo.reshape {value} : ({tensor_type(shape, element)}) -> "
                     f"{tensor_type(merged, element)}")
    value = _scan(text, value, merged, element, dim, combine, reverse)
    return text.add(f"stablehlo.reshape {value} : ({tensor_type(merged, element)}) -> "
                    f"{tensor_type(shape, element)}")


def _scan(text: SsaText, value: str, shape, element, dim, combine, reverse) -> str:
    n = shape[dim]
    if n <= BLOCK:
        return _in_order(text, value, shape, element, dim, combine, reverse)
    blocks = -(-n // BLOCK)
    wide = list(shape)
    wide[dim] = blocks * BLOCK
    if wide != shape:                     # the last block padded with the identity
        high = [0] * len(shape)
        high[dim] = wide[dim] - n
        value = text.add(f"stablehlo.pad {value}, %init, low = {[0] * len(shape)}, high = {high}, "
                         f"interior = {[0] * len(shape)} : ({tensor_type(shape, element)}, "
                         f"tensor<{element}>) -> {tensor_type(wide, element)}")
    split = wide[:dim] + [blocks, BLOCK] + wide[dim + 1:]
    value = text.add(f"stablehlo.reshape {value} : ({tensor_type(wide, element)}) -> "
                     f"{tensor_type(split, element)}")
    within = _in_order(text, value, split, element, dim + 1, combine, reverse)
    edge = 0 if reverse else BLOCK - 1
    totals_shape = split[:dim + 1] + split[dim + 2:]
    totals = text.add(_slice(within, split, dim + 1, edge, edge + 1, element))
    totals = text.add(f"stablehlo.reshape {totals} : ({tensor_type(_with(split, dim + 1, 1), element)})"
                      f" -> {tensor_type(totals_shape, element)}")
    scanned = _scan(text, totals, totals_shape, element, dim, combine, reverse)
    before = _shifted(text, scanned, totals_shape, element, dim, reverse)
    spread = text.add(f"stablehlo.broadcast_in_dim {before}, dims = "
                      f"{[d for d in range(len(split)) if d != dim + 1]} : "
                      f"({tensor_type(totals_shape, element)}) -> {tensor_type(split, element)}")
    pair = (within, spread) if reverse else (spread, within)
    value = _combined(text, combine, pair[0], pair[1], tensor_type(split, element), element)
    value = text.add(f"stablehlo.reshape {value} : ({tensor_type(split, element)}) -> "
                     f"{tensor_type(wide, element)}")
    if wide != shape:
        value = text.add(_slice(value, wide, dim, 0, n, element))
    return value


def _in_order(text: SsaText, value: str, shape, element, dim, combine, reverse) -> str:
    """The scan of at most 16 elements along ``dim``, each window combined from
    its first element to its last, as XLA's reduce_window loop does."""
    n = shape[dim]
    parts = [text.add(_slice(value, shape, dim, k, k + 1, element)) for k in range(n)]
    part_t = tensor_type(_with(shape, dim, 1), element)
    outs = []
    if reverse:
        for i in range(n):
            acc = parts[i]
            for k in range(i + 1, n):
                acc = _combined(text, combine, acc, parts[k], part_t, element)
            outs.append(acc)
    else:
        acc = parts[0]
        outs.append(acc)
        for k in range(1, n):
            acc = _combined(text, combine, acc, parts[k], part_t, element)
            outs.append(acc)
    return text.add(f"stablehlo.concatenate {', '.join(outs)}, dim = {dim} : "
                    f"({', '.join([part_t] * n)}) -> {tensor_type(shape, element)}")


def _shifted(text: SsaText, value: str, shape, element, dim, reverse) -> str:
    """``value`` moved one place along ``dim`` (an exclusive scan from an
    inclusive one), the identity coming in."""
    n = shape[dim]
    kept = text.add(_slice(value, shape, dim, 1 if reverse else 0, n if reverse else n - 1, element))
    low, high = [0] * len(shape), [0] * len(shape)
    (high if reverse else low)[dim] = 1
    return text.add(f"stablehlo.pad {kept}, %init, low = {low}, high = {high}, "
                    f"interior = {[0] * len(shape)} : ({tensor_type(_with(shape, dim, n - 1), element)}, "
                    f"tensor<{element}>) -> {tensor_type(shape, element)}")


def _slice(value: str, shape, dim: int, start: int, limit: int, element: str) -> str:
    ranges = ", ".join(f"{start}:{limit}" if d == dim else f"0:{size}" for d, size in enumerate(shape))
    return (f"stablehlo.slice {value} [{ranges}] : ({tensor_type(shape, element)}) -> "
            f"{tensor_type(_with(shape, dim, limit - start), element)}")


def _with(shape, dim: int, size: int) -> list[int]:
    changed = list(shape)
    changed[dim] = size
    return changed


def padded_text(name: str, shape: list[int], padded: list[int], result: list[int], element: str,
                padding: list[tuple[int, int]], window_attrs: str, body: str) -> str:
    """``@name(%x, %init)``: the reduce_window with its padding made an explicit
    ``stablehlo.pad`` by the init value (what padding means for reduce_window)."""
    t, tp, tr = (tensor_type(s, element) for s in (shape, padded, result))
    scalar = f"tensor<{element}>"
    low = [lo for lo, _ in padding]
    high = [hi for _, hi in padding]
    return (f"func.func private @{name}(%x: {t}, %init: {scalar}) -> {tr} {{\n"
            f"  %p = stablehlo.pad %x, %init, low = {low}, high = {high}, interior = {[0] * len(shape)}"
            f" : ({t}, {scalar}) -> {tp}\n"
            f"  %r = \"stablehlo.reduce_window\"(%p, %init) <{{{window_attrs}}}> ({{\n"
            f"  ^bb0(%a: {scalar}, %b: {scalar}):\n"
            f"    %c = {body} %a, %b : {scalar}\n"
            f"    stablehlo.return %c : {scalar}\n"
            f"  }}) : ({tp}, {scalar}) -> {tr}\n"
            f"  return %r : {tr}\n}}\n")
