"""A convolution of one filter per input channel (one channel into one
filter: ``jnp.convolve``, ``jnp.correlate``, ``jax.scipy.signal.convolve2d``;
or a depthwise one: ``jax.vmap(jnp.convolve)``) with many taps, its output row
cut into chunks and its taps into segments that join the channels of a
depthwise convolution, for xla-canonicalize-convolutions.

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
over the taps (pooling.mlir). Every product is one of the convolution's own
(no zero taps: an inf stays where it was); the chunks' windows overlap by the
kernel's span, a copy of the input that much longer, made from
ceil(span / (M*s)) slices of it. y' transposed to [n, oh, chunks, M, c] is
the output, its rows cut to OW.

Summed in one sequence, 1,280 taps left an error of 1.4e-6 of the largest
output (XLA's: 2e-7). So the kernel's columns are cut into S segments
(``_segments``: S divides KW, KH x KW / S taps at most SEGMENT_TAPS where the
lanes and the windows allow), each its own lanes: lane ``(s, c, q)`` reads
chunk q's window from column ``s * (KW/S) * d`` on and takes segment s's taps,

    y'[n, i, m, (s, c, q)] = sum over (a, b < KW/S) of x'[..., m*s + (s*KW/S + b)*d, ...] * w[a, s*KW/S + b, c]

and the segments' partial sums are added in pairs (a tree) at the end: the
same products, each segment's in the reference's order; 16 segments of 80
taps, 1.9e-7.

A filter bank (``_bank``: ungrouped, C channels into O filters, C x O at most
BANK_PAIRS) takes the same form with a lane per (segment, channel, filter,
chunk): the windows are copied for the C channels and broadcast over the O
filters, lane ``(s, c, o, q)`` takes segment s's taps of ``w[.., c, o]``, and
the S x C partial sums of each output are added in pairs. The conv schedule
summed each output's C x KW products in one sequence: 4 channels into 4
filters with 512 taps left 2.2e-6 of the largest output, as lanes 2.4e-7
(XLA 3.9e-7).
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
# f32 and narrower: the taps one lane sums in order (jnp.convolve's 1,280 taps in 16
# segments: 1.6e-7 of the largest output, as XLA's 2e-7; in one 1.4e-6) and the
# most elements of the segments' windows (a copy of the input per segment, nearly)
SEGMENT_TAPS = 80
WINDOW_LIMIT = 1 << 20
# the most lanes (segments x channels x chunks): the depthwise schedule keeps 8 pixels x
# up to 4 registers of them; 64 lanes (jax.vmap(jnp.convolve) of 8 signals in 8
# segments) spilled its 32 accumulators: the convolution 1.2 ms against 0.93 in 32
# lanes. 48 (3 segments x 16 chunks: a 21x21 kernel) run as tiles of 2 and 1 vectors
# (never 3: contraction_plan's pooling tiles), 5-7% slower than 32 lanes of fewer
# segments (42x42 in 6 segments against 2, 48x48 in 24 against 16: the windows'
# copies and the sums), so they are taken only where 32 leave one segment
MAX_LANES = 2 * VECTOR
WIDE_LANES = 3 * VECTOR
# filter banks (an ungrouped convolution of C channels into O filters, C x O pairs at
# most BANK_PAIRS): each output summed all C x KW taps in one sequence (4 channels into
# 4 filters, 512 taps: 2.2e-6 of the largest output, XLA 3.9e-7). As lanes (segment,
# channel, filter, chunk) of a depthwise convolution, the input broadcast over the
# filters, the partial sums over segments and channels added in pairs: up to 8 vectors
# of lanes (contraction_plan's 4-zmm tiles in 4 pixels, not 8: spilled) and 4M elements
# of windows (8 x 4 x 4096 by 4 x 4 x 512: 4 segments of 128 taps, 2.4e-7). At most
# BANK_FILTERS filters: the depthwise schedule runs ~14 GMAC/s on 2 cores whatever the
# bank, the conv schedule's filter vectors fill with the filters (8 x 2 x 4096 by
# 8 x 2 x 512: 8.5 ms against 21 as lanes; 4 -> 4 11.5 against 18-20; 1 -> 4 by 1,280
# taps 2.9 against 1.4); from BANK_PRODUCTS products per output (C x KH x KW): 81 in
# one sequence were already as accurate as XLA (1 -> 16 channels, 9x9: 3.9e-7), and
# 4x the time as lanes
BANK_PAIRS = VECTOR
BANK_FILTERS = 4
BANK_PRODUCTS = 2 * SEGMENT_TAPS
BANK_LANES = 8 * VECTOR
BANK_WINDOWS = 1 << 22


def min_taps(element: str) -> int:
    """Taps from which a convolution of ``element`` is chunked."""
    return MIN_TAPS if element == "f32" else MIN_TAPS_F64


def chunks(conv) -> bool:
    """Whether ``conv`` (any layout) takes one filter per input channel (one
    channel ungrouped, or depthwise) or is a filter bank (``_bank``), with
    min_taps taps or more and an output row of at least its chunk count, and is
    not an NHWC depthwise convolution the depthwise schedule takes as it is
    (VECTOR channels or a multiple)."""
    xs, ws, os_ = conv.shapes
    xl, wl, ol = conv.layouts
    c, i, o = xs[xl.index("f")], ws[wl.index("i")], ws[wl.index("o")]
    one_each = i == 1 and o == c == conv.groups and conv.batch_groups == 1
    taps = ws[wl.index("0")] * ws[wl.index("1")]
    if conv.lhs_dilation != (1, 1) or taps < min_taps(conv.element):
        return False
    if one_each:
        return os_[ol.index("1")] >= _count(c) and not (c % VECTOR == 0 and xl == "b01f")
    return _bank(conv)


def _bank(conv) -> bool:
    """An f32 filter bank: ungrouped, C x O pairs (more than one, at most
    BANK_PAIRS), at most BANK_FILTERS filters, BANK_PRODUCTS products per output
    or more, an output row of at least its chunk count, and windows within
    BANK_WINDOWS in one segment."""
    xs, ws, os_ = conv.shapes
    xl, wl, ol = conv.layouts
    c, o = ws[wl.index("i")], ws[wl.index("o")]
    kh, kw = (ws[wl.index(d)] for d in "01")
    if not (conv.element == "f32" and conv.groups == conv.batch_groups == 1 and 1 < c * o <= BANK_PAIRS
            and o <= BANK_FILTERS and c * kh * kw >= BANK_PRODUCTS):
        return False
    n, ow = os_[ol.index("b")], os_[ol.index("1")]
    h = xs[xl.index("0")] + sum(conv.padding[0])
    one_row = kh == os_[ol.index("0")] == h == 1
    if ow < _count(c * o):
        return False
    count, rows, _, span, _ = _layout(ow, c * o, kw, conv.stride[1], conv.rhs_dilation[1], one_row, 1)
    return n * (rows if rows > 1 else h) * span * c * o * count <= BANK_WINDOWS


def _count(channels: int) -> int:
    return VECTOR // math.gcd(channels, VECTOR)


def chunked(text, conv) -> str:
    """The lines computing ``conv`` (``chunks(conv)``) from ``%x``, ``%w``; returns the result."""
    xl, wl, ol = conv.layouts
    n, oh, ow, o = (conv.shapes[2][ol.index(d)] for d in "b01f")
    kh, kw = (conv.shapes[1][wl.index(d)] for d in "01")
    x, xs = _moved(text, "%x", conv.shapes[0], [xl.index(d) for d in "b01f"])
    w, ws = _moved(text, "%w", conv.shapes[1], [wl.index(d) for d in "01io"])
    bank = conv.groups == 1 and ws[2] * ws[3] > 1
    ci, f = xs[3], o if bank else 1    # the input's channels, lanes per channel (a bank's filters)
    c = ci * f                         # lanes per segment and chunk: (channel, filter)
    if bank:                           # HWIO: one filter per lane (c, o)
        w = text.op(f"stablehlo.reshape {w} : ({text.t(ws)}) -> {text.t([kh, kw, 1, c])}")
    (sh, sw), (dh, dw) = conv.stride, conv.rhs_dilation
    (lo0, hi0), (lo1, hi1) = conv.padding
    h = xs[1] + lo0 + hi0
    one_row = kh == oh == h == 1     # a 1-D convolution: its chunks in ROWS rows, the threads take rows
    segs = _segments(conv.element, n, h, ow, c, kh, kw, sw, dw, one_row, bank)
    count, rows, per, span, blocks = _layout(ow, c, kw, sw, dw, one_row, segs)
    pieces, taps, step = rows * count, kw // segs, per * sw
    lanes = segs * c * count
    width = -(-span // blocks)                          # a block's columns: the blocks just cover span
    hi1 += max(0, (segs - 1) * taps * dw + (blocks - 1) * width + pieces * step - (xs[2] + lo1 + hi1))
    x, xs = text.pad_or_crop(x, xs, (0, lo0, lo1, 0), (0, hi0, hi1, 0), (0, 0, 0, 0))
    hr = rows if rows > 1 else h
    row, part = [1, n, hr, count, step, ci], [1, n, hr, count, width, ci]
    parts = []
    for start in (s * taps * dw + block * width for s in range(segs) for block in range(blocks)):
        piece = text.op(f"stablehlo.slice {x} [0:{n}, 0:{h}, {start}:{start + pieces * step}, 0:{ci}] : "
                        f"({text.t(xs)}) -> {text.t([n, h, pieces * step, ci])}")
        piece = text.op(f"stablehlo.reshape {piece} : ({text.t([n, h, pieces * step, ci])}) -> {text.t(row)}")
        if width < step:
            piece = text.op(f"stablehlo.slice {piece} [0:1, 0:{n}, 0:{hr}, 0:{count}, 0:{width}, 0:{ci}] : "
                            f"({text.t(row)}) -> {text.t(part)}")
        parts.append(piece)
    whole = [segs * blocks, *part[1:]]
    windows = stacked(text, parts, part, whole)
    split = [segs, blocks, *part[1:]]
    windows = text.op(f"stablehlo.reshape {windows} : ({text.t(whole)}) -> {text.t(split)}")
    windows, moved = _moved(text, windows, split, [2, 3, 1, 5, 0, 6, 4])
    wide = [n, hr, blocks * width, segs * ci, count]
    windows = text.op(f"stablehlo.reshape {windows} : ({text.t(moved)}) -> {text.t(wide)}")
    if blocks * width != span:
        windows = text.op(f"stablehlo.slice {windows} [0:{n}, 0:{hr}, 0:{span}, 0:{segs * ci}, 0:{count}] : "
                          f"({text.t(wide)}) -> {text.t([n, hr, span, segs * ci, count])}")
    windows, wide = _spread(text, windows, [n, hr, span, segs * ci, count], f)
    kernel = _kernel(text, w, [kh, segs, taps, c], count)
    each = [n, rows if rows > 1 else oh, per, lanes]
    y = text.conv(windows, wide, kernel, [kh, taps, 1, lanes], each, (sh if rows == 1 else 1, sw),
                  ((0, 0), (0, 0)), (dh, dw), groups=lanes)
    split = [*each[:3], lanes // (o * count), o, count]     # the terms (segments, a bank's channels) first
    y = text.op(f"stablehlo.reshape {y} : ({text.t(each)}) -> {text.t(split)}")
    if o * count >= TILE_PIXELS:       # the terms' sums read runs of o x count lanes
        y = _pairwise(text, y, split, 3)
        y, ordered = _moved(text, y, [*each[:3], o, count], [0, 1, 4, 2, 3])
    else:                              # single lanes: the terms outermost first
        y, moved = _moved(text, y, split, [3, 0, 1, 5, 2, 4])
        y, ordered = _pairwise(text, y, moved, 0), moved[1:]
    out = [n, oh, pieces * per, o]
    y = text.op(f"stablehlo.reshape {y} : ({text.t(ordered)}) -> {text.t(out)}")
    if pieces * per != ow:
        y = text.op(f"stablehlo.slice {y} [0:{n}, 0:{oh}, 0:{ow}, 0:{o}] : "
                    f"({text.t(out)}) -> {text.t([n, oh, ow, o])}")
    y, _ = _moved(text, y, [n, oh, ow, o], ["b01f".index(d) for d in ol])
    return y


def _spread(text, windows, shape, f):
    """The windows [n, rows, span, (segment, channel), chunk] as the lanes
    [n, rows, span, (segment, channel, filter, chunk)]: each channel's window
    repeated for a bank's ``f`` filters, after the windows' copies and
    transposes (8 x 4 x 4096 by 4 x 4 x 512: those moved 4 times the data when
    the input was broadcast first)."""
    *rest, terms, count = shape
    if f > 1:
        wide = [*rest, terms, f, count]
        windows = text.op(f"stablehlo.broadcast_in_dim {windows}, dims = [0, 1, 2, 3, 5] : "
                          f"({text.t(shape)}) -> {text.t(wide)}")
        shape = wide
    lanes = [*rest, terms * f * count]
    return text.op(f"stablehlo.reshape {windows} : ({text.t(shape)}) -> {text.t(lanes)}"), lanes


def _segments(element, n, h, ow, c, kh, kw, sw, dw, one_row, bank=False) -> int:
    """Segments of the kernel's columns, each its own lanes: the fewest whose
    taps (kh x kw / segments) are at most SEGMENT_TAPS, else the most, in
    at most MAX_LANES lanes (WIDE_LANES where those leave one segment), their
    windows at most WINDOW_LIMIT elements (a ``bank``: BANK_LANES, BANK_WINDOWS).
    f32 only: f64 needs none, and a narrower type would round each partial sum."""
    if element != "f32":
        return 1
    limits, windows = ((BANK_LANES,), BANK_WINDOWS) if bank else ((MAX_LANES, WIDE_LANES), WINDOW_LIMIT)
    for limit in limits:
        fits = []
        for segs in (s for s in range(1, kw + 1) if kw % s == 0):
            count, rows, _, span, _ = _layout(ow, c, kw, sw, dw, one_row, segs)
            lanes = segs * c * count
            if segs == 1 or (lanes <= limit and n * (rows if rows > 1 else h) * span * lanes <= windows):
                fits.append(segs)
        if len(fits) > 1:
            break
    short = [s for s in fits if kh * kw // s <= SEGMENT_TAPS]
    return min(short) if short else max(fits)


def _layout(ow, c, kw, sw, dw, one_row, segs):
    """(chunks per row, rows, output positions per chunk, a lane's input columns, blocks)."""
    count = VECTOR // math.gcd(c * segs, VECTOR)
    rows = ROWS if one_row and ow >= ROWS * count * TILE_PIXELS else 1
    per = _per_chunk(ow, rows * count)
    span = (per - 1) * sw + (kw // segs - 1) * dw + 1
    return count, rows, per, span, -(-span // (per * sw))


def _kernel(text, w, split, count) -> str:
    """HWIO ``w`` [kh, kw, 1, c] as the lanes' kernel: lane (s, c, q) takes
    segment s's taps of channel c (``split``: [kh, segments, taps, c])."""
    kh, segs, taps, c = split
    kernel = text.op(f"stablehlo.reshape {w} : ({text.t([kh, segs * taps, 1, c])}) -> {text.t(split)}")
    kernel, moved = _moved(text, kernel, split, [0, 2, 1, 3])
    kernel = text.op(f"stablehlo.broadcast_in_dim {kernel}, dims = [0, 1, 2, 3] : "
                     f"({text.t(moved)}) -> {text.t([*moved, count])}")
    return text.op(f"stablehlo.reshape {kernel} : ({text.t([*moved, count])}) "
                   f"-> {text.t([kh, taps, 1, segs * c * count])}")


def _pairwise(text, y, shape, axis) -> str:
    """``y`` summed over its dim ``axis`` in pairs (a tree: the segments' partial sums)."""
    rest = [d for k, d in enumerate(shape) if k != axis]
    if shape[axis] == 1:
        return text.op(f"stablehlo.reshape {y} : ({text.t(shape)}) -> {text.t(rest)}")
    terms = []
    for s in range(shape[axis]):
        bounds = ", ".join(f"{s}:{s + 1}" if k == axis else f"0:{d}" for k, d in enumerate(shape))
        one = [1 if k == axis else d for k, d in enumerate(shape)]
        one_value = text.op(f"stablehlo.slice {y} [{bounds}] : ({text.t(shape)}) -> {text.t(one)}")
        terms.append(text.op(f"stablehlo.reshape {one_value} : ({text.t(one)}) -> {text.t(rest)}"))
    while len(terms) > 1:
        odd = terms[len(terms) - len(terms) % 2:]
        terms = [text.op(f"stablehlo.add {a}, {b} : {text.t(rest)}") for a, b in zip(terms[::2], terms[1::2])] + odd
    return terms[0]


def _per_chunk(ow: int, pieces: int) -> int:
    """Output positions per chunk: a multiple of TILE_PIXELS from there (the
    depthwise schedule's register tile divides the row: 13 positions ran in
    1-pixel tiles, one accumulator)."""
    per = -(-ow // pieces)
    return per if per <= TILE_PIXELS else -(-per // TILE_PIXELS) * TILE_PIXELS


def _moved(text, value: str, shape, perm) -> tuple[str, list[int]]:
    """``value`` transposed by ``perm``: a reshape where only unit dims move,
    else a transpose of the fewest dims (unit dims dropped, runs that stay
    together merged: the transpose schedules take 2 to 4 dims) between reshapes."""
    new = [shape[p] for p in perm]
    kept = [p for p in perm if shape[p] != 1]
    if kept == sorted(kept):
        if new == list(shape):
            return value, new
        return text.op(f"stablehlo.reshape {value} : ({text.t(shape)}) -> {text.t(new)}"), new
    runs = [[kept[0]]]                 # output order, source dims merged where they stay neighbours
    for p in kept[1:]:
        if p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    order = sorted(range(len(runs)), key=lambda r: runs[r][0])
    merged = [math.prod(shape[p] for p in runs[r]) for r in order]
    if merged != list(shape):
        value = text.op(f"stablehlo.reshape {value} : ({text.t(shape)}) -> {text.t(merged)}")
    value, moved = text.transpose(value, merged, [order.index(r) for r in range(len(runs))])
    if moved == new:
        return value, new
    return text.op(f"stablehlo.reshape {value} : ({text.t(moved)}) -> {text.t(new)}"), new
