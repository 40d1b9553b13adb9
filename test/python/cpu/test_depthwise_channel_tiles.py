"""The channels of a pooling or depthwise register tile are 4, 2 or 1 whole
vectors (contraction_plan._channel_tile), never 3: a 144-channel depthwise
convolution took 24-channel tiles at AVX2 (48 at AVX-512), whose
<24 x float> window reads LLVM put together lane by lane (10-20x the time).
The tiles in the IR at each level, and the numbers against numpy in float64
at every level this host runs."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.passes.cpu.plans.contraction_plan import _channel_tile

jax = pytest.importorskip("jax", reason="the programs come from jax: pip install 'xlac[bench]'")
lax = jax.lax


@pytest.mark.parametrize("c, lanes, tile", [
    (144, 8, 16), (144, 16, 16), (96, 16, 32), (192, 8, 32), (192, 16, 64), (120, 8, 8),
    (120, 16, 8), (168, 16, 8), (48, 8, 16), (16, 16, 16), (12, 8, 12), (3, 16, 3)])
def test_channel_tiles_are_whole_power_of_two_vectors(c, lanes, tile):
    assert _channel_tile(c, lanes) == tile


def _depthwise(shape, stride=1, window=3):
    c = shape[-1]
    x = np.zeros(shape, np.float32)
    w = np.zeros((window, window, 1, c), np.float32)
    return jax.jit(lambda a, b: lax.conv_general_dilated(
        a, b, (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=c)).lower(x, w).as_text()


def _max_pool(shape):
    x = np.zeros(shape, np.float32)
    return jax.jit(lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                                               "SAME")).lower(x).as_text()


@pytest.mark.parametrize("cpu, tile", [("x86-64-v3", "4x16"), ("x86-64-v4", "8x16")])
def test_144_channels_take_16_channel_tiles(cpu, tile):
    """Compiled only (no run): the depthwise tile in the vector code."""
    text = xlac.compile(_depthwise((2, 8, 8, 144)), cpu=cpu, cache=False).as_text("bufferized")
    assert f"vector<{tile}xf32>" in text
    assert not re.search(r"vector<\d+x(24|48)xf32>", text)


def _reference_depthwise(x, w, stride):
    """SAME padding as XLA pads (the odd one after), in float64."""
    k = w.shape[0]
    pads = [max((-(-n // stride) - 1) * stride + k - n, 0) for n in x.shape[1:3]]
    xp = np.pad(x.astype(np.float64), ((0, 0), *((p // 2, p - p // 2) for p in pads), (0, 0)))
    h, wd = xp.shape[1] - k + 1, xp.shape[2] - k + 1
    out = sum(xp[:, i:i + h, j:j + wd, :] * w[i, j, 0].astype(np.float64)
              for i in range(k) for j in range(k))
    return out[:, ::stride, ::stride]


@pytest.mark.parametrize("cpu", runnable_levels("host", "x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("c, stride", [(144, 1), (120, 1), (168, 2), (48, 1)])
def test_depthwise_channel_tiles_give_the_reference(cpu, c, stride):
    rng = np.random.default_rng(c)
    x = rng.standard_normal((2, 10, 12, c)).astype(np.float32)
    w = rng.standard_normal((3, 3, 1, c)).astype(np.float32)
    exe = xlac.compile(_depthwise(x.shape, stride), cpu=cpu, cache=False)
    got = np.asarray(exe(x, w))
    assert np.allclose(got, _reference_depthwise(x, w, stride), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cpu", runnable_levels("host", "x86-64-v3", "x86-64-v4"))
def test_max_pool_of_144_channels_gives_the_reference(cpu):
    x = np.random.default_rng(5).standard_normal((2, 10, 10, 144)).astype(np.float32)
    got = np.asarray(xlac.compile(_max_pool(x.shape), cpu=cpu, cache=False)(x))
    xp = np.pad(x, ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=-np.inf)
    want = np.max([xp[:, i:i + 9:2, j:j + 9:2, :] for i in range(3) for j in range(3)], axis=0)
    assert np.array_equal(got, want)
