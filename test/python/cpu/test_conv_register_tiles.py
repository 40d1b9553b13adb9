"""The NHWC convolutions' register tiles per CPU level (x86-64-v3's 2 x 32,
7 x 8 and 7 x 16; AVX-512's 8 x 32) and their filter slices."""

from __future__ import annotations

import numpy as np
import pytest
from plan_programs import plan_of

import xlac
from conftest import runnable_levels
from xlac.passes.cpu.plans.schedule_plan import Machine

AVX2, AVX512 = Machine(2, 32), Machine(2, 64)


def _conv_plan(pixels: int, c: int, f: int, machine: Machine):
    """The plan of a 3x3 NHWC convolution of 2 x pixels x pixels x c, f filters."""
    p, q = pixels, pixels + 2
    text = (f"func.func @main(%x: tensor<2x{q}x{q}x{c}xf32>, %w: tensor<3x3x{c}x{f}xf32>) -> tensor<2x{p}x{p}x{f}xf32> {{\n"
            f"  %z = arith.constant 0.0 : f32\n  %e = tensor.empty() : tensor<2x{p}x{p}x{f}xf32>\n"
            f"  %o = linalg.fill ins(%z : f32) outs(%e : tensor<2x{p}x{p}x{f}xf32>) -> tensor<2x{p}x{p}x{f}xf32>\n"
            f"  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<2x{q}x{q}x{c}xf32>, tensor<3x3x{c}x{f}xf32>) "
            f"outs(%o : tensor<2x{p}x{p}x{f}xf32>) -> tensor<2x{p}x{p}x{f}xf32>\n"
            f"  return %r : tensor<2x{p}x{p}x{f}xf32>\n}}")
    return plan_of(text, "linalg.conv_2d_nhwc_hwcf", machine)


def test_avx2_conv_tiles_take_four_filter_vectors():
    """x86-64-v3's register tile of the U-Net's 3x3 convolutions: 2 pixels x 32
    filters (4 x 16 before); a 7-pixel row keeps 7 x 8 with 64 channels, 7 x 16
    (14 accumulators, a micro-kernel call) from 128; AVX-512 keeps 8 x 32."""
    assert _conv_plan(32, 128, 128, AVX2).params[-3:] == (2, 32, 8)
    assert _conv_plan(7, 64, 64, AVX2).params[-3:-1] == (7, 8)
    assert _conv_plan(7, 512, 512, AVX2).params[-3:-1] == (7, 16)
    assert _conv_plan(14, 256, 256, AVX2).params[-3:-1] == (2, 32)
    assert _conv_plan(32, 128, 128, AVX512).params[-3:-1] == (8, 32)


def test_avx2_compiled_in_conv_packs_a_strided_filter_slice_larger_than_l1():
    """x86-64-v3's 3x3 64 -> 64 convolution at 56x56 (2 x 32 tiles of 64
    filters, a 72 KiB slice) takes the filters outside, packed; a 32-channel
    slice (36 KiB), 128 channels (the micro-kernel call) and AVX-512 do not."""
    assert _conv_plan(56, 64, 64, AVX2).sequence == "xla_conv_2d_nhwc_hwcf_filters_outer"
    assert _conv_plan(56, 64, 64, AVX2).params[-3:] == (2, 32, 8)
    assert _conv_plan(14, 32, 64, AVX2).sequence == "xla_conv_2d_nhwc_hwcf"
    assert _conv_plan(56, 64, 64, AVX512).sequence == "xla_conv_2d_nhwc_hwcf"


@pytest.mark.parametrize("c, f, sequence", [(16, 32, "xla_conv_2d_nhwc_hwcf"),
                                             (64, 64, "xla_conv_2d_nhwc_hwcf_filters_outer")])
def test_avx2_conv_with_four_filter_vectors_is_right(c, f, sequence):
    """A 3x3 SAME convolution in x86-64-v3's 2 x 32 tiles against numpy, the
    filter read in place (16 channels) and packed (64: a 72 KiB slice)."""
    shapes = f"(tensor<2x8x8x{c}xf32>, tensor<3x3x{c}x{f}xf32>) -> tensor<2x8x8x{f}xf32>"
    text = (f"func.func @main(%x: tensor<2x8x8x{c}xf32>, %w: tensor<3x3x{c}x{f}xf32>) -> tensor<2x8x8x{f}xf32> {{\n"
            "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            "window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
            f"{shapes}\n  return %y : tensor<2x8x8x{f}xf32>\n}}")
    plan = _conv_plan(8, c, f, AVX2)
    assert plan.params[-3:-1] == (2, 32) and plan.sequence == sequence
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 8, 8, c), dtype=np.float32), rng.standard_normal((3, 3, c, f), dtype=np.float32)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    want = sum(np.einsum("nhwc,cf->nhwf", padded[:, i:i + 8, j:j + 8], w[i, j]) for i in range(3) for j in range(3))
    exe = xlac.compile(text, cpu="x86-64-v3", cache=False)
    if "x86-64-v3" in runnable_levels("x86-64-v3"):
        np.testing.assert_allclose(exe(x, w), want, rtol=1e-5, atol=1e-4)
