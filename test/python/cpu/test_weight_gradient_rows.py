"""Weight gradients whose matmul rows are the input's channels (fewer than the
output features): the windows of one row of output positions side by side,
one dot per row (passes/lower/builders/convolution_text.py), right against
numpy at both CPU levels."""

from __future__ import annotations

import numpy as np
import pytest
from conv_programs import output_shape, program

import xlac
from conftest import runnable_levels

# JAX's weight gradient layouts: the images are the input's features, the
# channels its batch; dY is the kernel (images as its input features)
CASES = {
    # the flax MNIST CNN's two layers, fewer images
    "channels_32_features_64": ((4, 14, 14, 32), (4, 14, 14, 64), 1, 1),
    "one_channel": ((4, 28, 28, 1), (4, 28, 28, 32), 1, 1),
    # a stride-2 layer: dY dilated by the stride over the input
    "stride2": ((2, 9, 9, 8), (2, 4, 4, 24), 2, 0),
}


def _case(name):
    xs, ws, dilation, pad = CASES[name]
    window = {"pad": ((pad, pad), (pad, pad)), "rhs_dilate": (dilation, dilation)}
    return ("f01b", "i01o", "01bf", xs, ws, window)


def _numpy(x, dy, dilation, pad, out):
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0))).astype(np.float64)
    span = [(k - 1) * dilation + 1 for k in dy.shape[1:3]]
    grad = np.empty(out, np.float64)
    for p in range(out[0]):
        for q in range(out[1]):
            window = xp[:, p:p + span[0]:dilation, q:q + span[1]:dilation, :]
            grad[p, q] = np.einsum("nhwc,nhwo->co", window, dy)
    return grad


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("name", sorted(CASES))
def test_weight_gradient_matches_numpy(name, cpu):
    pytest.importorskip("jax", reason="the output shape comes from jax: pip install 'xlac[bench]'")
    case = _case(name)
    rng = np.random.default_rng(0)
    x, dy = (rng.standard_normal(s).astype(np.float32) for s in case[3:5])
    got = xlac.compile(program(case), cache=False, cpu=cpu)(x, dy)
    want = _numpy(x, dy, CASES[name][2], CASES[name][3], output_shape(case))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_one_dot_per_row_of_positions():
    """3x3 positions over 32 channels: three 96-row contractions, not nine of 32."""
    pytest.importorskip("jax", reason="the output shape comes from jax: pip install 'xlac[bench]'")
    linalg = xlac.compile(program(_case("channels_32_features_64")), cache=False).as_text("linalg")
    matmuls = [line for line in linalg.splitlines() if "linalg.matmul" in line]
    assert len(matmuls) == 3, matmuls
    assert all("x96xf32" in line or "96x" in line for line in matmuls), matmuls
