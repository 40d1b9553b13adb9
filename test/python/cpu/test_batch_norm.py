"""batch_norm_{inference,training,grad} through xlac.compile, checked against numpy."""

import numpy as np
import pytest

import xlac

EPS = 1e-3
EPS_F32 = float(np.float32(EPS))  # the attribute is an f32: what f64 math adds


def _program(op: str, operands: list[str], results: list[str], feature_index: int) -> str:
    args = ", ".join(f"%a{k}: {t}" for k, t in enumerate(operands))
    names = ", ".join(f"%r{k}" for k in range(len(results)))
    types = ", ".join(results)
    return f"""
func.func @main({args}) -> ({types}) {{
  {names} = "stablehlo.{op}"({", ".join(f"%a{k}" for k in range(len(operands)))})
      {{epsilon = {EPS} : f32, feature_index = {feature_index} : i64}}
      : ({", ".join(operands)}) -> ({types})
  return {names} : {types}
}}"""


def _inputs(shape, feature_index, seed=0):
    rng = np.random.default_rng(seed)
    channels = shape[feature_index]
    x = rng.standard_normal(shape)
    scale, offset, mean = (rng.standard_normal(channels) for _ in range(3))
    var = rng.random(channels) + 0.5
    return x, scale, offset, mean, var, rng.standard_normal(shape)


def _per_feature(vector, shape, feature_index):
    view = [1] * len(shape)
    view[feature_index] = shape[feature_index]
    return vector.reshape(view)


@pytest.mark.parametrize("feature_index", [0, 1, 2])
def test_inference(feature_index):
    shape = (2, 3, 4)
    x, scale, offset, mean, var, _ = _inputs(shape, feature_index)
    f = lambda v: _per_feature(v, shape, feature_index)  # noqa: E731
    c = shape[feature_index]
    text = _program("batch_norm_inference", ["tensor<2x3x4xf64>"] + [f"tensor<{c}xf64>"] * 4,
                    ["tensor<2x3x4xf64>"], feature_index)
    (got,) = xlac.compile(text).run(x, scale, offset, mean, var)
    want = f(scale) * (x - f(mean)) / np.sqrt(f(var) + EPS_F32) + f(offset)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_training():
    shape, fi = (4, 5, 3), 2
    x, scale, offset, *_ = _inputs(shape, fi, seed=1)
    x, scale, offset = (a.astype(np.float32) for a in (x, scale, offset))
    text = _program("batch_norm_training", ["tensor<4x5x3xf32>", "tensor<3xf32>", "tensor<3xf32>"],
                    ["tensor<4x5x3xf32>", "tensor<3xf32>", "tensor<3xf32>"], fi)
    out, mean, var = xlac.compile(text).run(x, scale, offset)
    f = lambda v: _per_feature(v, shape, fi)  # noqa: E731
    np.testing.assert_allclose(mean, x.mean(axis=(0, 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, x.var(axis=(0, 1)), rtol=1e-5)
    want = f(scale) * (x - f(mean)) / np.sqrt(f(var) + EPS) + f(offset)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_grad():
    shape, fi = (3, 2, 5), 1
    x, scale, _, mean, var, dy = _inputs(shape, fi, seed=2)
    text = _program("batch_norm_grad", ["tensor<3x2x5xf64>"] + ["tensor<2xf64>"] * 3
                    + ["tensor<3x2x5xf64>"],
                    ["tensor<3x2x5xf64>", "tensor<2xf64>", "tensor<2xf64>"], fi)
    gx, gscale, goffset = xlac.compile(text).run(x, scale, mean, var, dy)
    f = lambda v: _per_feature(v, shape, fi)  # noqa: E731
    n = x.size // shape[fi]
    normalized = (x - f(mean)) / np.sqrt(f(var) + EPS_F32)
    want_offset = dy.sum(axis=(0, 2))
    want_scale = (dy * normalized).sum(axis=(0, 2))
    want_x = f(scale) / np.sqrt(f(var) + EPS_F32) * (
        dy - f(want_offset) / n - normalized * f(want_scale) / n)
    np.testing.assert_allclose(goffset, want_offset, rtol=1e-12)
    np.testing.assert_allclose(gscale, want_scale, rtol=1e-12)
    np.testing.assert_allclose(gx, want_x, rtol=1e-10, atol=1e-12)
