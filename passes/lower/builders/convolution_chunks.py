"""A convolution of one filter per input channel (one channel into one
filter: ``jnp.convolve``, ``jnp.correlate``, ``jax.scipy.signal.convolve2d``;
or a depthwise one: ``jax.vmap(jnp.convolve)``) with many taps, its output row
cut into chunks that join the channels of a depthwise convolution, for
xla-canonicalize-convolutions.

With one channel and one filter there is nothing for the conv schedule to
vectorize but the output row, which it does not (a 3x1 tile, scalar code),
and the NCHW form became one slice-times-tap term per tap in one elementwise
kernel (convolution_text._depthwise_as_taps): 1,280 taps took 40-48 s to
compile (the LLVM dialect 247 MB). Here output positions ``q*M .. q*M + M-1``
(chunk ``q``, M = ceil(OW / chunks)) read the input's columns from ``q*M*s``
on, so the chunks' windows, side by side with the channels in
``x'[n, h, m, (c, q)] = x[n, h, q*M*s + m, c]``, make a depthwise convolution
whose kernel is the old one repeated for every chunk:

    y'[n, i, m, (c, q)] = sum over (a, b) of x'[n, i*sh + a*dh, m*s + b*d, (c, q)] * w[a, b, c]

which the depthwise schedule runs vectorized along the channels, tw output
positions x VECTOR channels of accumulators in registers while a loop goes
over the taps (pooling.mlir). Every product is one of the convolution's own,
in the reference's order (no zero taps: an inf stays where it was); the
chunks' windows overlap by the kernel's span, a copy of the input that much
longer, made from ceil(span / (M*s)) slices of it. y' transposed to
[n, oh, chunks, M, c] is the output, its rows cut to OW.
"""

from __future__ import annotations

import math

from xlac.passes.lower.builders.convolution_fold import stacked

VECTOR = 16          # channels x chunks: a multiple of one zmm, two ymm
TILE_PIXELS = 8      # the depthwise schedule's widest register tile (contraction_plan._pooling_plan)
ROWS = 4             # a 1-D convolution's rows of chunks (threads take rows)
MIN_TAPS = 64        # fewer taps keep the other forms (_depthwise_as_taps: 81 taps compiled in 2.8 s)
# f64: the depthwise schedule takes f32 only, so the chunks run as scalar loops:
# 5120 points by 128 taps 0.51 ms against the terms' 0.068; by 192 taps 0.83 ms
# against 1.2 (compiled in 0.9 s against 6.4)
MIN_TAPS_F64 = 192


def min_taps(element: str) -> int:
    """Taps from which a convolution of ``element`` is chunked."""
    return MIN_TAPS if element == "f32" else MIN_TAPS_F64


def chunks(conv) -> bool:
    """Whether ``conv`` (any layout) takes one filter per input channel (one
    channel ungrouped, or depthwise), with min_taps taps or more and an output
    row of at least its chunk count, and is not an NHWC depthwise convolution
    the depthwise schedule takes as it is (VECTOR channels or a multiple)."""
    xs, ws, os_ = conv.shapes
    xl, wl, ol = conv.layouts
    c, i, o = xs[xl.index("f")], ws[wl.index("i")], ws[wl.index("o")]
    one_each = i == 1 and o == c == conv.groups and conv.batch_groups == 1
    taps = ws[wl.index("0")] * ws[wl.index("1")]
    return (one_each and conv.lhs_dilation == (1, 1) and taps >= min_taps(conv.element)
            and os_[ol.index("1")] >= _count(c) and not (c % VECTOR == 0 and xl == "b01f"))


def _count(channels: int) -> int:
    return VECTOR // math.gcd(channels, VECTOR)


def chunked(text, conv) -> str:
    """The lines computing ``conv`` (``chunks(conv)``) from ``%x``, ``%w``; returns the result."""
    xl, wl, ol = conv.layouts
    n, oh, ow, c = (conv.shapes[2][ol.index(d)] for d in "b01f")
    kh, kw = (conv.shapes[1][wl.index(d)] for d in "01")
    x, xs = _moved(text, "%x", conv.shapes[0], [xl.index(d) for d in "b01f"])
    w, ws = _moved(text, "%w", conv.shapes[1], [wl.index(d) for d in "01io"])
    (sh, sw), (dh, dw) = conv.stride, conv.rhs_dilation
    (lo0, hi0), (lo1, hi1) = conv.padding
    count = _count(c)
    # a 1-D convolution's chunks in ROWS rows: the schedule's threads take rows
    rows = ROWS if kh == oh == xs[1] + lo0 + hi0 == 1 and ow >= ROWS * count * TILE_PIXELS else 1
    pieces = rows * count
    per = _per_chunk(ow, pieces)
    step = per * sw                                     # from one chunk's input columns to the next's
    span = (per - 1) * sw + (kw - 1) * dw + 1          # a chunk's input columns
    blocks = -(-span // step)
    hi1 += max(0, (blocks - 1 + pieces) * step - (xs[2] + lo1 + hi1))
    x, xs = text.pad_or_crop(x, xs, (0, lo0, lo1, 0), (0, hi0, hi1, 0), (0, 0, 0, 0))
    h = xs[1]
    hr = rows if rows > 1 else h
    part = [1, n, hr, count, step, c]
    parts = []
    for block in range(blocks):        # columns [block*step, (block+1)*step) of every chunk's window
        start = block * step
        piece = text.op(f"stablehlo.slice {x} [0:{n}, 0:{h}, {start}:{start + pieces * step}, 0:{c}] : "
                        f"({text.t(xs)}) -> {text.t([n, h, pieces * step, c])}")
        parts.append(text.op(f"stablehlo.reshape {piece} : ({text.t([n, h, pieces * step, c])}) "
                             f"-> {text.t(part)}"))
    whole = [blocks, *part[1:]]
    windows = stacked(text, parts, part, whole)
    windows, moved = text.transpose(windows, whole, [1, 2, 0, 4, 5, 3])
    wide = [n, hr, blocks * step, c * count]
    windows = text.op(f"stablehlo.reshape {windows} : ({text.t(moved)}) -> {text.t(wide)}")
    if blocks * step != span:
        windows = text.op(f"stablehlo.slice {windows} [0:{n}, 0:{hr}, 0:{span}, 0:{c * count}] : "
                          f"({text.t(wide)}) -> {text.t([n, hr, span, c * count])}")
        wide = [n, hr, span, c * count]
    kernel = text.op(f"stablehlo.broadcast_in_dim {w}, dims = [0, 1, 2, 3] : "
                     f"({text.t(ws)}) -> {text.t([kh, kw, 1, c, count])}")
    kernel = text.op(f"stablehlo.reshape {kernel} : ({text.t([kh, kw, 1, c, count])}) "
                     f"-> {text.t([kh, kw, 1, c * count])}")
    each = [n, rows if rows > 1 else oh, per, c * count]
    y = text.conv(windows, wide, kernel, [kh, kw, 1, c * count], each, (sh if rows == 1 else 1, sw),
                  ((0, 0), (0, 0)), (dh, dw), groups=c * count)
    split = [*each[:3], c, count]
    y = text.op(f"stablehlo.reshape {y} : ({text.t(each)}) -> {text.t(split)}")
    y, ordered = text.transpose(y, split, [0, 1, 4, 2, 3])
    out = [n, oh, pieces * per, c]
    y = text.op(f"stablehlo.reshape {y} : ({text.t(ordered)}) -> {text.t(out)}")
    if pieces * per != ow:
        y = text.op(f"stablehlo.slice {y} [0:{n}, 0:{oh}, 0:{ow}, 0:{c}] : "
                    f"({text.t(out)}) -> {text.t([n, oh, ow, c])}")
    y, _ = _moved(text, y, [n, oh, ow, c], ["b01f".index(d) for d in ol])
    return y


def _per_chunk(ow: int, pieces: int) -> int:
    """Output positions per chunk: a multiple of TILE_PIXELS from there (the
    depthwise schedule's register tile divides the row: 13 positions ran in
    1-pixel tiles, one accumulator)."""
    per = -(-ow // pieces)
    return per if per <= TILE_PIXELS else -(-per // TILE_PIXELS) * TILE_PIXELS


def _moved(text, value: str, shape, perm) -> tuple[str, list[int]]:
    """``value`` transposed by ``perm``: a reshape where only unit dims move."""
    new = [shape[p] for p in perm]
    kept = [p for p in perm if shape[p] != 1]
    if kept == sorted(kept):
        if new == list(shape):
            return value, new
        return text.op(f"stablehlo.reshape {value} : ({text.t(shape)}) -> {text.t(new)}"), new
    return text.transpose(value, shape, perm)
