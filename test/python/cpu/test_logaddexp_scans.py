"""lax.cumlogsumexp (a stablehlo.reduce_window whose body is jax's logaddexp)
scans in blocks of 16 as cumsum does (xla-rewrite-reduce-windows), each step
the whole logaddexp body (bf16 each op rounded to bf16, as the body and
XLA round it). Before, its window ran as written:
512x512 f32 down dim 0 took 7.8 s (n exps and logs per element) where XLA
takes 0.1 s. The order of the combines changes the rounding, so the results
are compared with XLA's and the reference interpreter's within a few ulps,
NaN and -inf included (-inf is logaddexp's identity, the scan's padding)."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

_CASES = [((5, 3), "float32", False), ((40, 7), "float32", False),
          ((6, 4), "bfloat16", True)]


def _program(x, reverse: bool) -> str:
    jax = pytest.importorskip("jax", reason="jax exports the cumlogsumexp compared")
    return jax.jit(lambda v: jax.lax.cumlogsumexp(v, axis=0, reverse=reverse)).lower(x).as_text()


@pytest.mark.parametrize("shape,dtype,reverse", _CASES)
def test_cumlogsumexp_scans_close_to_xla_and_reference(shape, dtype, reverse):
    jax = pytest.importorskip("jax")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    dtype = np.dtype(getattr(ml_dtypes, dtype) if dtype == "bfloat16" else dtype)
    x = (np.random.default_rng(3).standard_normal(shape) * 4).astype(dtype)
    x[2, 0], x[:, 1] = np.nan, -np.inf                         # a NaN column tail, an all -inf column
    x[shape[0] // 2, 2] = np.inf
    text = _program(x, reverse)
    exe = xlac.compile(text, cpu="x86-64-v3", cache=False)
    assert "reduce_window" not in exe.as_text("linalg")        # rewritten as a blocked scan
    if "x86-64-v3" not in runnable_levels("x86-64-v3"):
        pytest.skip("this CPU cannot run x86-64-v3 code (compiled and rewritten: checked)")
    got = np.asarray(exe(x)).astype(np.float64)
    from xlac.reference.server import shared_server
    (reference,) = shared_server().run(text.encode(), [x])
    xla = np.asarray(jax.jit(lambda v: jax.lax.cumlogsumexp(v, axis=0, reverse=reverse))(x))
    # each of up to ~2 log2(n) roundings on a path ~1 ulp of the running value
    tolerance = 12 * float(ml_dtypes.finfo(dtype).eps) * np.maximum(1.0, np.abs(got))
    for name, want in (("reference", reference), ("XLA", xla)):
        want = np.asarray(want).astype(np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(want)), name
        assert np.array_equal(np.isinf(got), np.isinf(want)), name
        finite = np.isfinite(want)
        assert np.all(np.abs(got[finite] - want[finite]) <= tolerance[finite]), name
