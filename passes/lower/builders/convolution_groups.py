"""Grouped convolutions as ungrouped ones the CPU schedules take, for
xla-canonicalize-convolutions.

A convolution with ``feature_group_count`` G > 1 lowers upstream to a
linalg.generic over a 5-D view (the groups a loop of their own) that no vector
schedule takes: it ran as scalar loops (8x32x32x64, 8 groups of 8 channels,
3x3: 125 ms against XLA's 20, Zen 4). ``batch_group_count`` B > 1 (the
weight gradient of a grouped convolution) likewise. Here, in the canonical
layout (NHWC x HWIO -> NHWC):

- one input channel per group and a channel multiplier 2 to 16 (a depthwise
  convolution with several outputs per channel, which upstream lowers to
  linalg.depthwise_conv_2d_nhwc_hwcm, also unscheduled): one depthwise
  convolution per multiplier index (the kernel's output features j, j+m, ...)
  with multiplier 1, which the depthwise schedule takes, the results
  interleaved back into the channels;
- otherwise one ungrouped convolution per group (at most ``MAX_GROUPS``), on
  its slice of the input (its channels; for batch groups its contiguous slice
  of the batch) and of the kernel's output features, the results
  concatenated along the features. Each output takes exactly its group's
  products: an infinite or NaN input stays in its group, as in the reference
  interpreter. (A block-diagonal kernel, as XLA's convolution group converter
  builds, ran 2-8x slower (G times the multiply-adds) and its zeros turned
  such an input into NaNs in every group: 0 * inf.)
- a plain depthwise convolution (one channel in and out per group) keeps its
  form, and so does a batch-grouped one with fewer than
  ``MIN_BATCH_GROUP_WORK`` images x output features per group (a depthwise
  weight gradient, say): upstream's loop runs it faster than G weight
  gradients of tiny per-position dots.

The inner convolutions are then canonicalized like any other (another round
of the pass: input dilation, weight-gradient forms).
"""

from __future__ import annotations

# one convolution per group: at most this many groups (each compiles in ~0.1 s;
# 256 groups of 2 channels: 5 ms against upstream's 76, but 23 s to compile)
MAX_GROUPS = 128
# batch groups: per group at least this many images x output features. Below,
# a weight gradient's per-group dots are tiny and upstream's loop (exact) runs
# 1.5-10x faster (8 images of 32x32, depthwise: 8 groups 0.34 ms against 3.2)
MIN_BATCH_GROUP_WORK = 16
MAX_MULTIPLIER = 16


def grouped(conv) -> bool:
    return conv.groups > 1 or conv.batch_groups > 1


def rewrites(conv) -> bool:
    """Whether the grouped ``conv`` gets an ungrouped form here: all but a
    plain depthwise convolution (one channel in and out per group: upstream's
    depthwise forms; through transposes to NHWC, MobileNet-v2's NCHW stride-2
    ones ran slower), more than ``MAX_GROUPS`` groups and batch groups with
    little work each (``MIN_BATCH_GROUP_WORK``)."""
    if conv.batch_groups > 1:     # per group: its images x its output features
        xs, ws, _ = conv.shapes
        images = xs[conv.layouts[0].index("b")] // conv.batch_groups
        outs = ws[conv.layouts[1].index("o")] // conv.batch_groups
        return conv.batch_groups <= MAX_GROUPS and images * outs >= MIN_BATCH_GROUP_WORK
    ci, co = _per_group(conv)
    if ci == 1 and co == 1:
        return False
    if ci == 1 and _splits(conv, co):
        return True
    return conv.groups <= MAX_GROUPS


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
    groups = max(conv.groups, conv.batch_groups)
    ci, cout = ws[2], ws[3]
    co = cout // groups
    if ci == 1 and conv.batch_groups == 1 and _splits(conv, co):
        y = _multiplier_split(text, conv, x, xs, w, ws, out, co)
    else:                             # batch groups slice the batch, feature groups the features
        y = _group_slices(text, conv, x, xs, w, ws, out, groups, 0 if conv.batch_groups > 1 else 3)
    y, _ = text.transpose(y, out, ["b01f".index(c) for c in conv.layouts[2]])
    return y


def _slice(text, v, shape, axis, lo, hi):
    part = list(shape)
    part[axis] = hi - lo
    bounds = ", ".join(f"{lo}:{hi}" if d == axis else f"0:{n}" for d, n in enumerate(shape))
    return text.op(f"stablehlo.slice {v} [{bounds}] : ({text.t(shape)}) -> {text.t(part)}"), part


def _group_slices(text, conv, x, xs, w, ws, out, groups, axis):
    """One ungrouped convolution per group, on its slice of the input (``axis``
    3: its features; 0: its images, for batch groups) and its output features,
    the results concatenated along the features: no product of one group's
    input and another's weights (a block-diagonal kernel's zeros would turn an
    inf or NaN into NaNs in every group)."""
    width, co = xs[axis] // groups, ws[3] // groups
    one = [*out[:3], co]
    parts = []
    for g in range(groups):
        xg, xgs = _slice(text, x, xs, axis, g * width, (g + 1) * width)
        wg, wgs = _slice(text, w, ws, 3, g * co, (g + 1) * co)
        parts.append(_conv(text, conv, xg, xgs, wg, wgs, one, 1))
    return text.op(f"stablehlo.concatenate {', '.join(parts)}, dim = 3 : "
                   f"({', '.join([text.t(one)] * groups)}) -> {text.t(out)}")


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
