"""A `stablehlo.convolution` program from a case (layouts, shapes, window), the
output shape from jax: shared by the cpu and cuda convolution tests."""

from __future__ import annotations

import numpy as np

from xlac.dtypes import tensor_type

# (input layout, kernel layout, output layout, input shape, kernel shape, window)
CASES = {
    "3x3": ("b01f", "01io", "b01f", (2, 9, 9, 8), (3, 3, 8, 16), {"pad": ((1, 1), (1, 1))}),
    "3x3_stride2": ("b01f", "01io", "b01f", (2, 9, 9, 8), (3, 3, 8, 16),
                    {"stride": (2, 2), "pad": ((1, 1), (1, 1))}),
    "7x7_stem": ("b01f", "01io", "b01f", (1, 20, 20, 3), (7, 7, 3, 16),
                 {"stride": (2, 2), "pad": ((3, 3), (3, 3))}),
    "1x1_stride2": ("b01f", "01io", "b01f", (2, 8, 8, 16), (1, 1, 16, 32), {"stride": (2, 2)}),
    "patch_4x4": ("b01f", "01io", "b01f", (2, 16, 16, 3), (4, 4, 3, 32), {"stride": (4, 4)}),
    "dilated_kernel": ("b01f", "01io", "b01f", (1, 12, 12, 8), (3, 3, 8, 8), {"rhs_dilate": (2, 2)}),
    "nchw": ("bf01", "oi01", "bf01", (2, 8, 10, 10), (16, 8, 3, 3), {"pad": ((1, 1), (1, 1))}),
    # PyTorch's 1x1 convolution: a batched dot on the NCHW pixels, no transposes
    "nchw_pointwise": ("bf01", "oi01", "bf01", (2, 16, 6, 8), (24, 16, 1, 1), {}),
    # on 7x7 pixels: 49 columns, one past AVX2's 16- and 8-column tiles
    "nchw_pointwise_7x7": ("bf01", "oi01", "bf01", (2, 64, 7, 7), (80, 64, 1, 1), {}),
    # PyTorch's depthwise convolution: the taps' shifted windows times per-channel weights
    "nchw_depthwise": ("bf01", "oi01", "bf01", (2, 16, 12, 12), (16, 1, 3, 3),
                       {"pad": ((1, 1), (1, 1)), "groups": 16}),
    "nchw_depthwise_dilated": ("bf01", "oi01", "bf01", (1, 8, 12, 20), (8, 1, 3, 3),
                               {"pad": ((2, 1), (2, 0)), "rhs_dilate": (2, 2), "groups": 8}),
    "input_grad_stride2": ("b01f", "01oi", "b01f", (2, 5, 5, 16), (3, 3, 8, 16),
                           {"pad": ((1, 2), (1, 2)), "lhs_dilate": (2, 2)}),
    "input_grad_stride1": ("b01f", "01oi", "b01f", (2, 8, 8, 16), (3, 3, 8, 16), {"pad": ((1, 1), (1, 1))}),
    # filter (590 KB) larger than the input: filters outside the pixels, slices packed
    "filters_outer": ("b01f", "01io", "b01f", (1, 4, 4, 128), (3, 3, 128, 128), {}),
    # filter (590 KB) out of cache, input (802 KB) larger: re-reading the filter per
    # pixel tile costs more than the input per filter slice, so filters outside too
    "filters_outer_larger_input": ("b01f", "01io", "b01f", (1, 14, 14, 1024), (3, 3, 1024, 16), {}),
    "weight_grad": ("f01b", "i01o", "01bf", (4, 8, 8, 8), (4, 8, 8, 16), {"pad": ((1, 1), (1, 1))}),
    # 64 channels: the window is the matmul's B, dY transposed once
    "weight_grad_wide": ("f01b", "i01o", "01bf", (2, 6, 6, 64), (2, 6, 6, 16), {"pad": ((1, 1), (1, 1))}),
    # a stride-2 layer's weight gradient: dY dilated by the stride over the input
    "weight_grad_stride2": ("f01b", "i01o", "01bf", (2, 8, 8, 64), (2, 4, 4, 32),
                            {"pad": ((0, 1), (0, 1)), "rhs_dilate": (2, 2)}),
    # negative padding crops the input: JAX's weight gradient of a stride-2 1x1
    # convolution (ResNet's downsampling shortcut) has pad [[0, -1], [0, -1]]
    "weight_grad_1x1_stride2": ("f01b", "i01o", "01bf", (2, 4, 4, 8), (2, 2, 2, 8),
                                {"pad": ((0, -1), (0, -1)), "rhs_dilate": (2, 2)}),
    "negative_pad": ("b01f", "01io", "b01f", (2, 9, 9, 8), (3, 3, 8, 16),
                     {"stride": (2, 2), "pad": ((-1, 1), (2, -2))}),
    "input_grad_negative_pad": ("b01f", "01oi", "b01f", (2, 5, 5, 16), (3, 3, 8, 16),
                                {"pad": ((-1, 2), (1, -1)), "lhs_dilate": (2, 2)}),
    # 1-D: a 2-D convolution with a unit dim (jax's default NCW layout ran as scalar loops)
    "ncw_1d": ("bf0", "oi0", "bf0", (2, 8, 40), (16, 8, 5), {"pad": ((2, 2),)}),
    "nwc_1d_stride2_dilated": ("b0f", "0io", "b0f", (2, 33, 8), (3, 8, 16),
                               {"stride": (2,), "pad": ((1, 1),), "rhs_dilate": (2,)}),
    # one input channel, wide kernels: the kernel's columns folded into the channels
    "wide_kernel_one_channel": ("b01f", "01io", "b01f", (2, 20, 24, 1), (5, 9, 1, 4),
                                {"stride": (2, 2), "pad": ((2, 2), (4, 3)), "rhs_dilate": (1, 2)}),
    # JAX's weight gradient of a one-image SAME convolution with a 12x12 kernel
    "weight_grad_whole_image": ("f01b", "i01o", "01bf", (1, 12, 12, 4), (1, 12, 12, 8),
                                {"pad": ((5, 6), (5, 6))}),
    "ncw_1d_wide_kernel": ("bf0", "oi0", "bf0", (2, 1, 100), (3, 1, 17), {"pad": ((8, 8),)}),
    "ncw_1d_depthwise": ("bf0", "oi0", "bf0", (2, 16, 80), (16, 1, 3), {"pad": ((1, 1),), "groups": 16}),
    # grouped convolutions: one ungrouped convolution per group, concatenated
    "grouped_4": ("b01f", "01io", "b01f", (2, 9, 9, 16), (3, 3, 4, 24), {"pad": ((1, 1), (1, 1)), "groups": 4}),
    "grouped_nchw_stride2": ("bf01", "oi01", "bf01", (2, 8, 10, 10), (12, 4, 3, 3),
                             {"stride": (2, 2), "pad": ((1, 1), (1, 1)), "groups": 2}),
    "grouped_input_grad": ("b01f", "01io", "b01f", (2, 5, 5, 8), (3, 3, 4, 8),
                           {"pad": ((1, 2), (1, 2)), "lhs_dilate": (2, 2), "groups": 2}),
    "ncw_1d_grouped": ("bf0", "oi0", "bf0", (2, 8, 40), (16, 2, 5), {"pad": ((2, 2),), "groups": 4}),
    # a depthwise convolution with 3 outputs per channel: 3 of multiplier 1, interleaved
    "depthwise_multiplier_3": ("b01f", "01io", "b01f", (2, 10, 10, 8), (3, 3, 1, 24),
                               {"pad": ((1, 1), (0, 2)), "rhs_dilate": (1, 2), "groups": 8}),
    "depthwise_nchw_multiplier_2": ("bf01", "oi01", "bf01", (2, 8, 9, 9), (16, 1, 3, 3),
                                    {"stride": (2, 2), "pad": ((1, 1), (1, 1)), "groups": 8}),
    # weight gradients of grouped convolutions: one per batch group; the depthwise
    # ones (1 image x 1 output per group) keep upstream's loop
    "batch_grouped_weight_grad": ("f01b", "i01o", "01bf", (2, 8, 8, 16), (2, 8, 8, 16),
                                  {"pad": ((1, 1), (1, 1)), "batch_groups": 4}),
    "batch_grouped_depthwise_grad": ("f01b", "i01o", "01bf", (2, 8, 8, 8), (2, 8, 8, 8),
                                     {"pad": ((1, 1), (1, 1)), "batch_groups": 8}),
    "batch_grouped_depthwise_grad_one_image": ("f01b", "i01o", "01bf", (1, 8, 8, 8), (1, 8, 8, 8),
                                               {"pad": ((1, 1), (1, 1)), "batch_groups": 8}),
}


def output_shape(case) -> tuple[int, ...]:
    import jax
    ins, ker, out, xs, ws, window = case
    window = dict(window)
    groups = window.pop("groups", 1)
    batch_groups = window.pop("batch_groups", 1)
    names = {"b": "N", "f": "C", "0": "H", "1": "W", "2": "D", "i": "I", "o": "O"}
    spec = tuple("".join(names[c] for c in layout) for layout in (ins, ker, out))
    spatial = len(xs) - 2
    shape = jax.eval_shape(lambda x, w: jax.lax.conv_general_dilated(
        x, w, window.get("stride", (1,) * spatial), window.get("pad", ((0, 0),) * spatial),
        window.get("lhs_dilate", (1,) * spatial), window.get("rhs_dilate", (1,) * spatial),
        dimension_numbers=spec, feature_group_count=groups, batch_group_count=batch_groups),
        jax.ShapeDtypeStruct(xs, np.float32), jax.ShapeDtypeStruct(ws, np.float32)).shape
    return tuple(shape)


def _window_text(window: dict) -> str:
    def text(value):
        return str([list(v) for v in value]) if isinstance(value[0], tuple) else str(list(value))
    return ", ".join(f"{key} = {text(value)}" for key, value in window.items())


def program(case, element: str = "f32") -> str:
    """``main(x, w)``: the case's convolution of ``element`` values."""
    ins, ker, out, xs, ws, window = case
    os_ = output_shape(case)
    window = dict(window)
    groups = window.pop("groups", 1)
    batch_groups = window.pop("batch_groups", 1)
    layouts = ", ".join(ins) + "]x[" + ", ".join(ker) + "]->[" + ", ".join(out)
    x, w, y = (tensor_type(s, element) for s in (xs, ws, os_))
    return (f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
            f"  %0 = stablehlo.convolution(%x, %w) dim_numbers = [{layouts}], "
            f"window = {{{_window_text(window)}}}"
            f" {{batch_group_count = {batch_groups} : i64, feature_group_count = {groups} : i64}}"
            f" : ({x}, {w}) -> {y}\n"
            f"  return %0 : {y}\n}}\n")
