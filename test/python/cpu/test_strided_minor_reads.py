"""Reads of every s-th element along the minor dim (x[..., k::s], s <= 4) as one
contiguous masked load and a shuffle (xla-flatten-minor-transfers,
passes/cpu/strided_minor_reads.py): the same values as numpy, for offsets
up to the last element of a row (the load's mask keeps it inside the slice),
several element types, at host and x86-64-v3 (the IR: the lit test
test/passes/cpu/xla-flatten-minor-transfers.mlir; NCHW max-pool gradients:
test_select_and_scatter_windows.py)."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax")
ml_dtypes = pytest.importorskip("ml_dtypes")


def _run(fn, args, level):
    exe = xlac.compile(jax.jit(fn).lower(*args).as_text(), cpu=level, cache=False)
    if level in runnable_levels(level):
        got, want = np.asarray(exe(*args)), np.asarray(fn(*[np.asarray(a) for a in args]))
        np.testing.assert_array_equal(got, want)
    return exe


@pytest.mark.parametrize("level", ["host", "x86-64-v3"])
@pytest.mark.parametrize("stride", [2, 3, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, ml_dtypes.bfloat16, np.float16])
def test_strided_sums(level, stride, dtype):
    """The sum of the s phases of each row: every element read once, the last
    phase ending on the row's (and the buffer's) last element."""
    x = np.random.default_rng(stride).integers(-50, 50, (33, 64 * stride)).astype(dtype)

    def phases(a):
        out = a[:, 0::stride]
        for k in range(1, stride):
            out = out + a[:, k::stride]
        return out
    _run(phases, (x,), level)
