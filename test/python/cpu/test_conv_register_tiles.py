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


def _conv_plan_of(n: int, ow: int, c: int, f: int, k: int, machine: Machine):
    """The plan of a k x k VALID convolution of n rows of ow output pixels."""
    q = ow + k - 1
    text = (f"func.func @main(%x: tensor<1x{q}x{q}x{c}xf32>, %w: tensor<{k}x{k}x{c}x{f}xf32>) -> tensor<1x{ow}x{ow}x{f}xf32> {{\n"
            f"  %z = arith.constant 0.0 : f32\n  %e = tensor.empty() : tensor<1x{ow}x{ow}x{f}xf32>\n"
            f"  %o = linalg.fill ins(%z : f32) outs(%e : tensor<1x{ow}x{ow}x{f}xf32>) -> tensor<1x{ow}x{ow}x{f}xf32>\n"
            f"  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x{q}x{q}x{c}xf32>, tensor<{k}x{k}x{c}x{f}xf32>) "
            f"outs(%o : tensor<1x{ow}x{ow}x{f}xf32>) -> tensor<1x{ow}x{ow}x{f}xf32>\n"
            f"  return %r : tensor<1x{ow}x{ow}x{f}xf32>\n}}")
    return plan_of(text, "linalg.conv_2d_nhwc_hwcf", machine)


def test_odd_filters_and_rows_take_whole_vector_tiles_with_tails():
    """33 filters on 30-pixel rows, 17 channels (bench's big.conv.f32): tiles of
    whole vectors with peeled tails (6 x 16 and 8-channel steps at AVX2, 8 x 32
    and 16 at AVX-512), not 6 x 11 on 1-channel steps; a 26-pixel row of 24
    filters (conv.asym_pad) 6 x 16 and 7 x 16, an 8-filter tail, at AVX2 and
    AVX-512, not 2 x 8 and 2 x 24 (24: three vectors, or a zmm and a ymm)."""
    assert _conv_plan_of(1, 30, 17, 33, 3, AVX2).params[-3:] == (6, 16, 8)
    assert _conv_plan_of(1, 30, 17, 33, 3, AVX512).params[-3:] == (8, 32, 16)
    assert _conv_plan_of(1, 26, 16, 24, 5, AVX2).params[-3:] == (6, 16, 8)
    assert _conv_plan_of(1, 26, 16, 24, 5, AVX512).params[-3:] == (7, 16, 16)


def test_dividing_tiles_stay_where_they_fit():
    """Rows and filter counts the dividing tiles fit (the real models') keep them."""
    assert _conv_plan(32, 128, 128, AVX2).params[-3:] == (2, 32, 8)
    assert _conv_plan(7, 64, 64, AVX2).params[-3:] == (7, 8, 8)
    assert _conv_plan(28, 64, 64, AVX512).params[-3:] == (7, 32, 16)


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("f, c, pixels", [(1, 3, 9), (7, 5, 11), (8, 17, 13), (9, 9, 11), (17, 17, 15),
                                          (33, 17, 13), (65, 4, 9)])
def test_conv_tails_are_right(cpu, f, c, pixels):
    """Filter counts around the vectors (1, 7, 8, 9, 17, 33, 65), odd rows and
    channel counts: the peeled tails against numpy."""
    q = pixels + 2
    shapes = f"(tensor<1x{q}x{q}x{c}xf32>, tensor<3x3x{c}x{f}xf32>) -> tensor<1x{pixels}x{pixels}x{f}xf32>"
    text = (f"func.func @main(%x: tensor<1x{q}x{q}x{c}xf32>, %w: tensor<3x3x{c}x{f}xf32>) "
            f"-> tensor<1x{pixels}x{pixels}x{f}xf32> {{\n"
            "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            "window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
            f"{shapes}\n  return %y : tensor<1x{pixels}x{pixels}x{f}xf32>\n}}")
    rng = np.random.default_rng(f)
    x, w = rng.standard_normal((1, q, q, c), dtype=np.float32), rng.standard_normal((3, 3, c, f), dtype=np.float32)
    want = sum(np.einsum("nhwc,cf->nhwf", x[:, i:i + pixels, j:j + pixels], w[i, j]) for i in range(3) for j in range(3))
    np.testing.assert_allclose(xlac.compile(text, cpu=cpu, cache=False)(x, w), want, rtol=1e-5, atol=1e-4)


def _row_conv_text(n: int, w: int, c: int, f: int, k: int, pad: tuple[int, int]) -> str:
    """A 1 x k NHWC convolution of n rows of w pixels, padded ``pad``: StableHLO."""
    ow = w + sum(pad) - k + 1
    shapes = f"(tensor<{n}x1x{w}x{c}xf32>, tensor<1x{k}x{c}x{f}xf32>) -> tensor<{n}x1x{ow}x{f}xf32>"
    return (f"func.func @main(%x: tensor<{n}x1x{w}x{c}xf32>, %w: tensor<1x{k}x{c}x{f}xf32>) "
            f"-> tensor<{n}x1x{ow}x{f}xf32> {{\n"
            "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            f"window = {{pad = [[0, 0], [{pad[0]}, {pad[1]}]]}} "
            "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
            f"{shapes}\n  return %y : tensor<{n}x1x{ow}x{f}xf32>\n}}")


def _row_conv_plan(ow: int, c: int, f: int, k: int, machine: Machine):
    """The plan of a 1 x k VALID NHWC convolution of 8 rows of ow output pixels."""
    q = ow + k - 1
    x, w, y = f"tensor<8x1x{q}x{c}xf32>", f"tensor<1x{k}x{c}x{f}xf32>", f"tensor<8x1x{ow}x{f}xf32>"
    text = (f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
            f"  %z = arith.constant 0.0 : f32\n  %e = tensor.empty() : {y}\n"
            f"  %o = linalg.fill ins(%z : f32) outs(%e : {y}) -> {y}\n"
            f"  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : {x}, {w}) outs(%o : {y}) -> {y}\n"
            f"  return %r : {y}\n}}")
    return plan_of(text, "linalg.conv_2d_nhwc_hwcf", machine)


@pytest.mark.parametrize("machine", [AVX2, AVX512])
def test_a_row_with_no_small_divisor_peels_its_tail_not_one_pixel_tiles(machine):
    """4 filters (fewer than the lanes) over a 4607-pixel row (17 x 271, no
    divisor from 2 to 8): the schedule of the 4606-pixel row (7 x 4 tiles),
    a tile of several pixels with the row's last step peeled, not 1 x 4."""
    wide, near = _row_conv_plan(4607, 4, 4, 512, machine), _row_conv_plan(4606, 4, 4, 512, machine)
    assert wide.sequence == near.sequence
    assert near.params[-3:-1] == (7, 4)
    assert wide.params[-2] == 4 and wide.params[-3] >= 7


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("pad", [(511, 511), (511, 510), (3, 4)])
def test_row_with_a_peeled_pixel_tail_matches_numpy(cpu, pad):
    """The full-padded 1 x 512 convolution of 4 channels into 4 filters
    (4607 pixels: 8-pixel tiles and a 7-pixel tail) against numpy in float64."""
    rng = np.random.default_rng(39)
    x, w = rng.standard_normal((2, 1, 4096, 4), dtype=np.float32), rng.standard_normal((1, 512, 4, 4), dtype=np.float32)
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pad, (0, 0)))
    ow = padded.shape[2] - 511
    want = sum(np.einsum("nhwc,cf->nhwf", padded[:, :, j:j + ow], w[0, j].astype(np.float64)) for j in range(512))
    got = xlac.compile(_row_conv_text(2, 4096, 4, 4, 512, pad), cpu=cpu, cache=False)(x, w)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
