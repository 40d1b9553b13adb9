"""Grouped convolutions as ungrouped ones the CPU schedules take, for
xla-canonicalize-convolutions.

A convolution with ``feature_group_count`` G > 1 lowers upstream to a
linalg.generic over a 5-D view (the groups a loop of their own) that no vector
schedule takes: it ran as scalar loops (8x32x32x64, 8 groups of 8 channels,
3x3: 125 ms against XLA's 20, Zen 4). ``batch_group_count`` B > 1 (the
weight gradient of a grouped convolution) likewise. Here, in the canonical
layout (NHWC x HWIO -> NHWC):

- batch groups become feature groups: the input's batch, split into B
  contiguous groups, is moved into its features (group-major), so group g's
  input features are g's batch slice; the kernel and output are unchanged;
- one input channel per group and a channel multiplier 2 to 16 (a depthwise
  convolution with several outputs per channel, which upstream lowers to
  linalg.depthwise_conv_2d_nhwc_hwcm, also unscheduled): one depthwise
  convolution per multiplier index (the kernel's output features j, j+m, ...)
  with multiplier 1, which the depthwise schedule takes, the results
  interleaved back into the channels;
- otherwise the kernel becomes block-diagonal over the groups (zeros outside
  a group's block, as XLA's convolution group converter makes it) and the
  convolution an ungrouped one: G times the multiply-adds, but on the dense
  convolution schedule (~100 GFLOP/s against the scalar loops' ~0.6). The
  zero products add +0: each sum takes the grouped products, except that an
  infinite or NaN input poisons the other groups' outputs (0 * inf). A plain
  depthwise convolution (one channel in and out per group) keeps its form.

The inner convolutions are then canonicalized like any other (another round
of the pass: input dilation, weight-gradient forms).
"""

from __future__ import annotations

# block-diagonal kernels: at most this many groups (the work grows G-fold) and
# this many elements in the dense kernel
MAX_DENSE_GROUPS = 64
MAX_DENSE_KERNEL = 1 << 24
MAX_MULTIPLIER = 16


def grouped(conv) -> bool:
    return conv.groups > 1 or conv.batch_groups > 1


def rewrites(conv) -> bool:
    """Whether the grouped ``conv`` gets an ungrouped form here: all but a
    plain depthwise convolution (one channel in and out per group: upstream's
    depthwise forms; through transposes to NHWC, MobileNet-v2's NCHW stride-2
    ones ran slower) and block diagonals past the limits."""
    xs, ws, _ = conv.shapes
    if conv.batch_groups > 1:
        ci = ws[conv.layouts[1].index("i")]
        cout = ws[conv.layouts[1].index("o")]
        dense = cout * ci * conv.batch_groups * ws[conv.layouts[1].index("0")] * ws[conv.layouts[1].index("1")]
        return conv.batch_groups <= MAX_DENSE_GROUPS and dense <= MAX_DENSE_KERNEL
    ci, co = _per_group(conv)
    if ci == 1 and co == 1:
        return False
    if ci == 1 and _splits(conv, co):
        return True
    dense = xs[conv.layouts[0].index("f")] * ws[conv.layouts[1].index("o")] * \
        ws[conv.layouts[1].index("0")] * ws[conv.layouts[1].index("1")]
    return conv.groups <= MAX_DENSE_GROUPS and dense <= MAX_DENSE_KERNEL


def _per_group(conv) -> tuple[int, int]:
    ws = conv.shapes[1]
    return ws[conv.layouts[1].index("i")], ws[conv.layouts[1].index("o")] // conv.groups


def _splits(conv, multiplier: int) -> bool:
    return conv.batch_groups == 1 and 1 < multiplier <= MAX_MULTIPLIER and \
        conv.lhs_dilation == (1, 1) and min(min(p) for p in conv.padding) >= 0


def grouped_body(text, conv) -> str:
    """The lines computing grouped ``conv`` from ``%x``, ``%w``; returns the result."""
    xs, ws, os_ = conv.shapes
    x, xs = text.transpose("%x", xs, [conv.layouts[0].index(c) for c in "b01f"])
    w, ws = text.transpose("%w", ws, [conv.layouts[1].index(c) for c in "01io"])
    out = [os_[conv.layouts[2].index(c)] for c in "b01f"]
    groups = conv.groups
    if conv.batch_groups > 1:
        x, xs = _batch_into_features(text, x, xs, conv.batch_groups)
        groups = conv.batch_groups
    ci, cout = ws[2], ws[3]
    co = cout // groups
    if ci == 1 and co == 1:
        y = _conv(text, conv, x, xs, w, ws, out, groups)
    elif ci == 1 and _splits(conv, co):
        y = _multiplier_split(text, conv, x, xs, w, ws, out, co)
    else:
        w, ws = _block_diagonal(text, w, ws, groups)
        y = _conv(text, conv, x, xs, w, ws, out, 1)
    y, _ = text.transpose(y, out, ["b01f".index(c) for c in conv.layouts[2]])
    return y


def _batch_into_features(text, x, xs, b):
    """[N, H, W, C] -> [N/B, H, W, B*C]: batch group g's images as features g*C.. ."""
    n, h, w_, c = xs
    split = [b, n // b, h, w_, c]
    v = text.op(f"stablehlo.reshape {x} : ({text.t(xs)}) -> {text.t(split)}")
    v, moved = text.transpose(v, split, [1, 2, 3, 0, 4])
    new = [n // b, h, w_, b * c]
    return text.op(f"stablehlo.reshape {v} : ({text.t(moved)}) -> {text.t(new)}"), new


def _block_diagonal(text, w, ws, groups):
    """[KH, KW, ci, G*co] -> [KH, KW, G*ci, G*co], zero where the in and out
    groups differ: the kernel broadcast over the in groups, the output
    features minor (whole vector rows), masked where o / co != g."""
    kh, kw, ci, cout = ws
    full = [kh, kw, groups, ci, cout]
    wide = text.op(f"stablehlo.broadcast_in_dim {w}, dims = [0, 1, 3, 4] : "
                   f"({text.t(ws)}) -> {text.t(full)}")
    index = f"tensor<{'x'.join(map(str, full))}xi32>"
    rows = text.op(f"stablehlo.iota dim = 2 : {index}")
    cols = text.op(f"stablehlo.iota dim = 4 : {index}")
    width = text.op(f"stablehlo.constant dense<{cout // groups}> : {index}")
    col_groups = text.op(f"stablehlo.divide {cols}, {width} : {index}")
    mask = text.op(f"stablehlo.compare EQ, {rows}, {col_groups} : ({index}, {index}) -> "
                   f"tensor<{'x'.join(map(str, full))}xi1>")
    zeros = text.op(f"stablehlo.broadcast_in_dim {text.zero()}, dims = [] : "
                    f"(tensor<{text.element}>) -> {text.t(full)}")
    kept = text.op(f"stablehlo.select {mask}, {wide}, {zeros} : "
                   f"tensor<{'x'.join(map(str, full))}xi1>, {text.t(full)}")
    dense = [kh, kw, groups * ci, cout]
    return text.op(f"stablehlo.reshape {kept} : ({text.t(full)}) -> {text.t(dense)}"), dense


def _multiplier_split(text, conv, x, xs, w, ws, out, m):
    """A depthwise convolution of multiplier ``m`` as ``m`` of multiplier 1, interleaved."""
    kh, kw, _, cout = ws
    channels = cout // m
    one = [*out[:3], channels]
    parts = []
    for j in range(m):
        part = [kh, kw, 1, channels]
        wj = text.op(f"stablehlo.slice {w} [0:{kh}, 0:{kw}, 0:1, {j}:{cout}:{m}] : "
                     f"({text.t(ws)}) -> {text.t(part)}")
        yj = _conv(text, conv, x, xs, wj, part, one, channels)
        parts.append(text.op(f"stablehlo.reshape {yj} : ({text.t(one)}) -> {text.t([*one, 1])}"))
    stacked = [*one, m]
    joined = text.op(f"stablehlo.concatenate {', '.join(parts)}, dim = 4 : "
                     f"({', '.join([text.t([*one, 1])] * m)}) -> {text.t(stacked)}")
    return text.op(f"stablehlo.reshape {joined} : ({text.t(stacked)}) -> {text.t(out)}")


def _conv(text, conv, x, xs, w, ws, out, groups) -> str:
    return text.conv(x, xs, w, ws, out, conv.stride, conv.padding, conv.rhs_dilation,
                     conv.lhs_dilation, groups)
