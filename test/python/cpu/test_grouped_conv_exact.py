"""Grouped convolutions stay exact per group: an inf or NaN in one group's
input leaves every other group's outputs as the reference interpreter gives
them (finite). A block-diagonal kernel over the groups would multiply the inf
by another group's zero weights (NaN everywhere). Feature groups, depthwise
channel multipliers and batch groups (weight gradients), at the host level and
x86-64-v3: compiled at both, run where the CPU can."""

from __future__ import annotations

import numpy as np
import pytest
from conv_programs import CASES, output_shape, program

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

# cases of conv_programs.py with groups: their poisoned group is 1
GROUPED = ["grouped_4", "grouped_nchw_stride2", "ncw_1d_grouped", "depthwise_multiplier_3",
           "depthwise_nchw_multiplier_2", "batch_grouped_weight_grad", "batch_grouped_depthwise_grad",
           "batch_grouped_depthwise_grad_one_image"]
LEVELS = ("host", "x86-64-v3")
POISONED = 1


def _groups(case) -> tuple[int, str, str]:
    """The group count, the input dim its groups split ("f" or "b") and the output's."""
    window = case[5]
    if window.get("batch_groups", 1) > 1:
        return window["batch_groups"], "b", "f"
    return window["groups"], "f", "f"


def _group_slice(layout: str, shape, dim: str, groups: int, g: int) -> tuple[slice, ...]:
    axis = layout.index(dim)
    width = shape[axis] // groups
    return tuple(slice(g * width, (g + 1) * width) if d == axis else slice(None) for d in range(len(shape)))


def _poisoned_inputs(case, groups, dim):
    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal(s).astype(np.float32) for s in case[3:5])
    part = x[_group_slice(case[0], x.shape, dim, groups, POISONED)]
    flat = part.reshape(-1)
    flat[::3] = np.inf
    flat[1::3] = np.nan
    flat[2::7] = -np.inf
    x[_group_slice(case[0], x.shape, dim, groups, POISONED)] = flat.reshape(part.shape)
    return x, w


@pytest.mark.parametrize("name", GROUPED)
def test_an_inf_or_nan_stays_in_its_group(name):
    pytest.importorskip("jax", reason="the cases' shapes come from jax: pip install 'xlac[bench]'")
    case = CASES[name]
    groups, dim, out_dim = _groups(case)
    text = program(case)
    x, w = _poisoned_inputs(case, groups, dim)
    (want,) = shared_server().run(text.encode(), [x, w])
    out = output_shape(case)
    for cpu in LEVELS:
        exe = xlac.compile(text, cache=False, cpu=cpu)
        if cpu not in runnable_levels(*LEVELS):
            continue
        got = np.asarray(exe(x, w))
        for g in range(groups):
            if g == POISONED:
                continue
            part = _group_slice(case[2], out, out_dim, groups, g)
            assert np.isfinite(want[part]).all(), (name, g)
            np.testing.assert_allclose(got[part], want[part], rtol=1e-4, atol=1e-4,
                                       err_msg=f"{name} at {cpu}: group {g}")
        poisoned = _group_slice(case[2], out, out_dim, groups, POISONED)
        assert not np.isfinite(got[poisoned]).all(), (name, cpu)
