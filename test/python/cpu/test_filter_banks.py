"""Filter banks with many taps (an ungrouped convolution of a few channels into a
few filters: lax.conv_general_dilated NCW x OIW) run as a depthwise convolution
with a lane per (segment, channel, filter, chunk), the partial sums over the
segments and channels added in pairs (convolution_chunks._bank): right against
numpy in float64 at every CPU level this host runs, and as accurate as XLA's
where one sum over all the channels' taps in order was 3-6x less."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_long_convolutions import chunked_matches

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax", reason="the programs come from jax: pip install 'xlac[bench]'")
lax = jax.lax
F64 = np.float64


def _bank(x, w, stride, padding, dilation):
    """lax.conv_general_dilated NC... x OI... -> NC... (1 or 2 spatial dims) in
    float64; a negative padding crops."""
    spatial = x.ndim - 2
    x = x.astype(F64)
    for d, (lo, hi) in enumerate(padding):
        axis = 2 + d
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
        x = np.take(x, range(max(-lo, 0), x.shape[axis] - max(-hi, 0)), axis=axis)
    k = w.shape[2:]
    out_sizes = [(x.shape[2 + d] - (k[d] - 1) * dilation[d] - 1) // stride[d] + 1 for d in range(spatial)]
    out = np.zeros((x.shape[0], w.shape[0], *out_sizes))
    for taps in np.ndindex(*k):
        index = tuple(slice(t * dl, t * dl + (size - 1) * s + 1, s)
                      for t, dl, s, size in zip(taps, dilation, stride, out_sizes))
        window = x[(slice(None), slice(None), *index)]
        out += np.einsum("nc...,oc->no...", window, w[(slice(None), slice(None), *taps)].astype(F64))
    return out


def _cases():
    rng = np.random.default_rng(67)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def case(xs, ws, stride, padding, dilation=None, numbers=None):
        dilation = dilation or (1,) * len(stride)
        x, w = normal(*xs), normal(*ws)

        def fn(a, b):
            return lax.conv_general_dilated(a, b, stride, padding, rhs_dilation=dilation)
        return fn, [x, w], lambda a, b: _bank(a, b, stride, padding, dilation)

    return {
        "ncw_4x4_full": case((2, 4, 900), (4, 4, 200), (1,), [(199, 199)]),
        "ncw_1_into_4": case((1, 1, 1500), (4, 1, 300), (1,), [(299, 299)]),
        "ncw_4_into_1": case((3, 4, 700), (1, 4, 120), (1,), [(60, 59)]),
        "ncw_3_into_4_strided_dilated": case((2, 3, 1200), (4, 3, 96), (3,), [(7, -2)], (2,)),
        "nchw_2_into_3_9x9": case((2, 2, 40, 50), (3, 2, 9, 9), (2, 1), [(4, 4), (3, 5)]),
        "nchw_3_into_2_8x16_dilated": case((1, 3, 30, 90), (2, 3, 8, 16), (1, 2), [(0, 0), (4, 4)], (1, 2)),
    }


CASES = _cases()


@pytest.mark.parametrize("cpu", ["host", "x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_filter_bank_matches_numpy(name, cpu):
    chunked_matches(*CASES[name], cpu)


def test_an_nhwc_bank_matches_numpy():
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 12, 300, 2)).astype(np.float32), rng.standard_normal((3, 40, 2, 4)).astype(np.float32)

    def fn(a, b):
        return lax.conv_general_dilated(a, b, (1, 2), [(1, 1), (20, 19)], dimension_numbers=("NHWC", "HWIO", "NHWC"))
    exe = xlac.compile(jax.jit(fn).lower(x, w).as_text(), cache=False)
    assert "linalg.depthwise_conv_2d_nhwc_hwc" in exe.as_text("linalg")
    want = _bank(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 2), [(1, 1), (20, 19)], (1, 1))
    got = np.asarray(exe(x, w), F64).transpose(0, 3, 1, 2)
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


def test_an_inf_stays_where_the_reference_has_it():
    """Every lane multiplies only the convolution's own products."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 2, 1000)).astype(np.float32), rng.standard_normal((3, 2, 100)).astype(np.float32)
    x[0, 0, [37, 600]] = np.inf
    x[0, 1, 300] = np.nan

    def fn(a, b):
        return lax.conv_general_dilated(a, b, (1,), [(99, 99)])
    exe = xlac.compile(jax.jit(fn).lower(x, w).as_text(), cache=False)
    got = np.asarray(exe(x, w))
    with np.errstate(invalid="ignore"):
        want = _bank(x, w, (1,), [(99, 99)], (1,))
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("channels, filters, taps, lanes", [
    (8, 2, 200, True), (9, 2, 200, False),       # BANK_PAIRS: 16 (channel, filter) pairs
    (1, 4, 200, True), (1, 5, 200, False),       # BANK_FILTERS: 4
    (1, 4, 160, True), (1, 4, 150, False),       # BANK_PRODUCTS: 160 per output
])
def test_which_banks_take_lanes(channels, filters, taps, lanes):
    """Larger banks, more filters or fewer products per output keep the conv schedule."""
    x, w = np.zeros((1, channels, 900), np.float32), np.zeros((filters, channels, taps), np.float32)

    def fn(a, b):
        return lax.conv_general_dilated(a, b, (1,), "SAME")
    linalg = xlac.compile(jax.jit(fn).lower(x, w).as_text(), cache=False).as_text("linalg")
    assert ("depthwise" in linalg) == lanes


def test_f64_keeps_the_conv_schedule():
    f64 = """func.func @main(%x: tensor<1x2x900xf64>, %w: tensor<2x2x200xf64>) -> tensor<1x2x701xf64> {
      %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {}
           {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
           : (tensor<1x2x900xf64>, tensor<2x2x200xf64>) -> tensor<1x2x701xf64>
      return %0 : tensor<1x2x701xf64>
    }"""
    assert "depthwise" not in xlac.compile(f64, cache=False).as_text("linalg")


def _accuracy_cases():
    rng = np.random.default_rng(39)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def ncw(xs, ws, padding):
        def fn(a, b):
            return lax.conv_general_dilated(a, b, (1,), [padding])
        return fn, [normal(*xs), normal(*ws)], lambda a, b: _bank(a, b, (1,), [padding], (1,))

    return {
        "4x4_512_same": ncw((8, 4, 4096), (4, 4, 512), (255, 256)),
        "4x4_1280_full": ncw((1, 4, 5120), (4, 4, 1280), (1279, 1279)),
        "1x4_1280_full": ncw((1, 1, 5120), (4, 1, 1280), (1279, 1279)),
    }


# error of the largest output, f32 against float64 (bench/long_convolutions.py, this
# host, the same at x86-64-v3): XLA 3.9e-7, 3.4-4.3e-7, 4.2-5.1e-7; every output's
# channels and taps summed in one sequence (the conv schedule) 2.2e-6, 2.3-2.7e-6,
# 1.0-1.4e-6; as lanes 2.4e-7 (4 segments of 128), 2.1e-7 (8 of 160), 1.9-2.2e-7 (8 of 160)
ACCURACY = {"4x4_512_same": 3.5e-7, "4x4_1280_full": 3.5e-7, "1x4_1280_full": 3.5e-7}


@pytest.mark.parametrize("cpu", ["host", "x86-64-v3"])
@pytest.mark.parametrize("name", sorted(ACCURACY))
def test_filter_banks_as_accurate_as_xla(name, cpu):
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"{cpu} does not run here")
    chunked_matches(*_accuracy_cases()[name], cpu, ACCURACY[name])


def test_four_into_four_takes_four_segments_of_64_lanes():
    """8 x 4 x 4096 by 4 x 4 x 512: 16 pairs x 8 segments of 64 taps would copy
    4.5M elements of windows (over BANK_WINDOWS), so 4 segments of 128 taps in 64
    lanes, their 16 partial sums (segments x channels) added in a tree of 15."""
    args = _accuracy_cases()["4x4_512_same"][1]
    text = jax.jit(lambda a, b: lax.conv_general_dilated(a, b, (1,), "SAME")).lower(*args).as_text()
    exe = xlac.compile(text, cache=False)
    assert re.search(r"linalg\.depthwise_conv_2d_nhwc_hwc .*x128x64xf32>", exe.as_text("linalg"))
