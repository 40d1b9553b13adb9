"""A convolution with few input channels and a wide kernel, its kernel's
columns folded into the channels (an im2col along the width only).

The CPU conv schedule contracts over the input channels per kernel tap; with
one channel (JAX's weight gradient of a one-image NHWC convolution has the
images as the input's feature dim) each tap is a rank-1 update, and a 48x48
window ran at about a third of the matmul rate. Folding the KW taps of a row
into the channels, x'[n, h, ow, (kx, c)] = x[n, h, ow*s + kx*d, c], leaves a
KH x 1 window over KW*C channels; the kernel's fold is a reshape (HWIO has W
and I adjacent), the input's costs one copy KW times the input's width over OW.
"""

from __future__ import annotations

# Fold when a tap contracts over fewer channels than this and a kernel row has at
# least FOLD_MIN_WIDTH taps (3x3 CNN kernels keep the plain schedule) and at most
# FOLD_MAX_WIDTH (one slice per column, and the copy grows with the width).
FOLD_MAX_CHANNELS = 8
FOLD_MIN_WIDTH = 8
FOLD_MAX_WIDTH = 64


def folds(xs, ws, out, stride) -> bool:
    """Whether the canonical (NHWC x HWIO -> NHWC) convolution is worth folding.

    Only where a row's taps overlap (column stride below the kernel's width):
    a patchifying convolution (ViT's 16x16 stride-16 embedding, 3 channels)
    was not measured either way, and on the CUDA target its fold's slices are
    launches of their own (hf_vit 95 -> 112)."""
    kw, c = ws[1], ws[2]
    return (c < FOLD_MAX_CHANNELS and FOLD_MIN_WIDTH <= kw <= FOLD_MAX_WIDTH and out[2] > 1
            and stride[1] < kw)


def folded_conv(text, x, xs, w, ws, out, stride, padding, rhs_dilation) -> str:
    """The canonical convolution of ``x`` ([N, H, W, C]) and ``w`` ([KH, KW, C, O]),
    computed as a KH x 1 convolution over KW*C channels."""
    (lo0, hi0), (lo1, hi1) = padding
    x, xs = text.pad_or_crop(x, list(xs), (0, lo0, lo1, 0), (0, hi0, hi1, 0), (0, 0, 0, 0))
    n, h, _, c = xs
    kh, kw, _, o = ws
    ow, step, dilation = out[2], stride[1], rhs_dilation[1]
    part = [n, h, ow, c]
    parts = []
    for kx in range(kw):
        start = kx * dilation
        piece = text.op(f"stablehlo.slice {x} [0:{n}, 0:{h}, {start}:{start + (ow - 1) * step + 1}:{step}, "
                        f"0:{c}] : ({text.t(xs)}) -> {text.t(part)}")
        parts.append(text.op(f"stablehlo.reshape {piece} : ({text.t(part)}) -> {text.t([1, *part])}"))
    columns = stacked(text, parts, [1, *part], [kw, *part])
    moved, moved_shape = text.transpose(columns, [kw, *part], [1, 2, 3, 0, 4])
    wide = [n, h, ow, kw * c]
    x2 = text.op(f"stablehlo.reshape {moved} : ({text.t(moved_shape)}) -> {text.t(wide)}")
    w2_shape = [kh, 1, kw * c, o]
    w2 = text.op(f"stablehlo.reshape {w} : ({text.t(ws)}) -> {text.t(w2_shape)}")
    return text.conv(x2, wide, w2, w2_shape, out, (stride[0], 1), ((0, 0), (0, 0)), (rhs_dilation[0], 1))


def stacked(text, parts: list[str], part: list[int], whole: list[int], step: int = 1) -> str:
    """``parts`` (``step`` rows each) one after another along dim 0, each written into place with a
    dynamic_update_slice: a copy of contiguous rows (memcpy), where upstream
    lowers a concatenate to a generic that selects its operand per element
    and runs as scalar loops."""
    if len(parts) == 1:
        return parts[0]
    index = "tensor<i64>"
    zero_index = text.op(f"stablehlo.constant dense<0> : {index}")
    y = text.op(f"stablehlo.broadcast_in_dim {text.zero()}, dims = [] : "
                f"(tensor<{text.element}>) -> {text.t(whole)}")
    for k, value in enumerate(parts):
        row = text.op(f"stablehlo.constant dense<{k * step}> : {index}")
        starts = ", ".join([row] + [zero_index] * (len(whole) - 1))
        y = text.op(f"stablehlo.dynamic_update_slice {y}, {value}, {starts} : "
                    f"({text.t(whole)}, {text.t(part)}, {', '.join([index] * len(whole))}) "
                    f"-> {text.t(whole)}")
    return y
