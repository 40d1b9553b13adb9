"""Convolutions of every stride, dilation, padding and layout, and their
gradients, right against the reference interpreter and on the CPU schedules
(no scalar loops) at both the AVX2 and the AVX-512 level."""

from __future__ import annotations

import numpy as np
import pytest
from conv_programs import CASES, program

import xlac
from xlac.reference.server import shared_server

SLOW_IN_THE_INTERPRETER = ("filters_outer_larger_input",)       # ~15 s there: CI's heavy step
# depthwise weight gradients (batch groups of 1 image x 1 output feature) keep
# upstream's loop: 1.5-10x faster than per-group weight gradients of tiny dots
UPSTREAM_LOOP = ("batch_grouped_depthwise_grad", "batch_grouped_depthwise_grad_one_image")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.heavy) if n in SLOW_IN_THE_INTERPRETER else n
                                  for n in sorted(CASES)])
def test_convolution_matches_the_interpreter(name):
    pytest.importorskip("jax", reason="the cases' shapes come from jax: pip install 'xlac[bench]'")
    text = program(CASES[name])
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in CASES[name][3:5]]
    (want,) = shared_server().run(text.encode(), inputs)
    got = xlac.compile(text, cache=False)(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("name", sorted(set(CASES) - set(UPSTREAM_LOOP)))
def test_convolution_runs_on_a_schedule(name, cpu):
    pytest.importorskip("jax", reason="the cases' shapes come from jax: pip install 'xlac[bench]'")
    """The convolution (or the dots it became) is scheduled; what may stay scalar is
    the interleaving of stride phases and the like: copies, small beside it."""
    report = xlac.compile(program(CASES[name]), cache=False, cpu=cpu).fusion_report()
    unscheduled = [line for line in report.partition("not scheduled:")[2].splitlines() if line]
    assert [line for line in unscheduled if "linalg.generic" not in line
            or int(line.split("(")[1].split()[0]) > 2000] == [], report


def test_depthwise_nchw_convolution_is_elementwise_without_transposes():
    pytest.importorskip("jax", reason="the cases' shapes come from jax: pip install 'xlac[bench]'")
    linalg = xlac.compile(program(CASES["nchw_depthwise"]), cache=False).as_text("linalg")
    assert "reduction" not in linalg and "linalg.transpose" not in linalg
    assert "linalg.conv" not in linalg and "linalg.depthwise" not in linalg


def test_pointwise_nchw_convolution_is_a_dot_without_transposes():
    pytest.importorskip("jax", reason="the cases' shapes come from jax: pip install 'xlac[bench]'")
    linalg = xlac.compile(program(CASES["nchw_pointwise"]), cache=False).as_text("linalg")
    assert "linalg.batch_matmul" in linalg and "linalg.transpose" not in linalg
    assert "linalg.conv_2d" not in linalg


def test_one_channel_wide_kernel_folds_its_columns_into_the_channels():
    """A 5x9 kernel over one channel runs as a 5x1 convolution over 9 channels."""
    pytest.importorskip("jax", reason="the cases' shapes come from jax: pip install 'xlac[bench]'")
    linalg = xlac.compile(program(CASES["wide_kernel_one_channel"]), cache=False).as_text("linalg")
    assert "tensor<5x1x9x4xf32>" in linalg and "tensor<5x9x1x4xf32>" not in linalg.split("linalg.conv")[-1]
