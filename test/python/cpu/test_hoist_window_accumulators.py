"""The pooling schedules' output tile stays in registers through the window's
taps (xla-hoist-window-accumulators): no transfer_write in a tagged tap loop,
which carries the tile as its iter_arg; the numbers bit-identical to the code
without the pass and right against numpy in float64, at every level this host
runs: depthwise NHWC (strides, 5x5), NCHW, max and sum pooling, a filter bank
(a depthwise convolution of 64 lanes and one row of 512 taps)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_depthwise_channel_tiles import _reference_depthwise

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax", reason="the programs come from jax: pip install 'xlac[bench]'")
lax = jax.lax
F64 = np.float64
PASS = "xla-hoist-window-accumulators"
LEVELS = runnable_levels("host", "x86-64-v3", "x86-64-v4")


def _depthwise_nhwc(stride):
    return lambda a, b: lax.conv_general_dilated(a, b, (stride, stride), "SAME",
                                                 dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                                 feature_group_count=a.shape[-1])


def _depthwise_nchw(a, b):
    return lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                    feature_group_count=a.shape[1])


def _max_pool(a):
    return lax.reduce_window(a, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")


def _sum_pool(a):
    return lax.reduce_window(a, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "VALID")


def _bank(a, b):
    return lax.conv_general_dilated(a, b, (1,), "SAME")


def _windows(x, k, stride, fill):
    """The k x k windows of NHWC ``x`` (SAME padding with ``fill`` where given, else VALID)."""
    if fill is not None:
        pads = [max((-(-n // stride) - 1) * stride + k - n, 0) for n in x.shape[1:3]]
        x = np.pad(x, ((0, 0), *((p // 2, p - p // 2) for p in pads), (0, 0)), constant_values=fill)
    h, w = (x.shape[1] - k) // stride + 1, (x.shape[2] - k) // stride + 1
    return [x[:, i:i + (h - 1) * stride + 1:stride, j:j + (w - 1) * stride + 1:stride]
            for i in range(k) for j in range(k)]


def _bank_reference(x, w):
    """NCW x OIW 'same' (XLA's padding: the odd one after) in float64."""
    k = w.shape[2]
    xp = np.pad(x.astype(F64), ((0, 0), (0, 0), ((k - 1) // 2, k // 2)))
    n = x.shape[2]
    cols = np.stack([xp[:, :, t:t + n] for t in range(k)], axis=-1)        # N C W K
    return np.einsum("ncwk,ock->now", cols, w.astype(F64))


def _cases():
    rng = np.random.default_rng(7)
    normal = lambda *s: rng.standard_normal(s).astype(np.float32)        # noqa: E731
    x144, w144 = normal(2, 10, 12, 144), normal(3, 3, 1, 144)
    x168, w168 = normal(2, 11, 13, 168), normal(3, 3, 1, 168)
    x96, w96 = normal(2, 14, 14, 96), normal(5, 5, 1, 96)
    xc, wc = normal(2, 32, 10, 12), normal(32, 1, 3, 3)
    xp, xs = normal(2, 10, 10, 144), normal(2, 10, 10, 64)
    xb, wb = normal(2, 4, 1024), normal(4, 4, 512)
    nchw = lambda: _reference_depthwise(xc.transpose(0, 2, 3, 1), wc.transpose(2, 3, 1, 0), 1)  # noqa: E731
    return {
        "depthwise144": (_depthwise_nhwc(1), (x144, w144), lambda: _reference_depthwise(x144, w144, 1), 1e-5),
        "depthwise168_stride2": (_depthwise_nhwc(2), (x168, w168), lambda: _reference_depthwise(x168, w168, 2), 1e-5),
        "depthwise96_5x5": (_depthwise_nhwc(1), (x96, w96), lambda: _reference_depthwise(x96, w96, 1), 1e-5),
        "depthwise_nchw": (_depthwise_nchw, (xc, wc), lambda: nchw().transpose(0, 3, 1, 2), 1e-5),
        "max_pool": (_max_pool, (xp,), lambda: np.max(_windows(xp, 3, 2, -np.inf), axis=0), 0.0),
        "sum_pool": (_sum_pool, (xs,), lambda: np.sum(_windows(xs.astype(F64), 3, 1, None), axis=0), 1e-6),
        "filter_bank": (_bank, (xb, wb), lambda: _bank_reference(xb, wb), 3.5e-7),
    }


CASES = _cases()
# the cases whose kernels the pooling schedules take (NCHW depthwise is a generic)
TAGGED = ("depthwise144", "depthwise168_stride2", "depthwise96_5x5", "max_pool", "sum_pool", "filter_bank")


def _compiled(name, cpu, disable=()):
    fn, args, _, _ = CASES[name]
    return xlac.compile(jax.jit(fn).lower(*args).as_text(), cpu=None if cpu == "host" else cpu,
                        cache=False, disable_passes=disable)


def _tap_loops(text):
    """Each outer tap loop's lines (header to closing line)."""
    lines = text.splitlines()
    found = []
    for end, line in enumerate(lines):
        if not line.strip().startswith("} {xla.window_taps}"):
            continue
        indent = len(line) - len(line.lstrip())
        start = max(i for i in range(end) if "scf.for" in lines[i] and len(lines[i]) - len(lines[i].lstrip()) == indent)
        found.append(lines[start:end + 1])
    return [loop for loop in found if not any(loop is not other and "\n".join(loop) in "\n".join(other)
                                             for other in found)]


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("name", TAGGED)
def test_tile_is_carried_through_the_taps(name, cpu):
    """Compiled only: every tagged tap loop carries a vector and writes nothing."""
    loops = _tap_loops(_compiled(name, cpu).as_text("bufferized"))
    assert loops
    for loop in loops:
        assert re.search(r"= scf\.for .* iter_args\(.*\) -> \(vector<", loop[0])
        assert not any("vector.transfer_write" in line for line in loop)


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_without_the_pass_the_taps_write_the_tile(cpu):
    """What the pass removes: a transfer_write per tap (the check above is not vacuous)."""
    loops = _tap_loops(_compiled("depthwise144", cpu, disable=(PASS,)).as_text("bufferized"))
    assert loops and all(any("vector.transfer_write" in line for line in loop) for loop in loops)


@pytest.mark.parametrize("cpu", LEVELS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_results_are_the_reference_and_unchanged(name, cpu):
    fn, args, reference, bound = CASES[name]
    got = np.asarray(_compiled(name, cpu)(*args))
    want = reference()
    assert got.shape == want.shape
    assert np.abs(got.astype(F64) - want).max() <= bound * np.abs(want).max()
    before = np.asarray(_compiled(name, cpu, disable=(PASS,))(*args))
    assert np.array_equal(got, before)                    # the same operations in the same order
