"""Cumulative ops, approx_max_k and top_k over a symbolic dim (jax.export, `b`
rows): jax writes `custom_call @stablehlo.dynamic_reduce_window` (its padding
is `b - 1`), an `@ApproxTopK` with shape operands and, for a symbolic k,
`@stablehlo.dynamic_top_k`, which stayed dynamic once the call's shapes were
known and were refused ("could not make static").
xla-static-dynamic-calls makes them static ops. Checked against the reference
interpreter running the function lowered for the concrete shape, and jax."""

import numpy as np
import pytest

import xlac
from xlac.reference.server import shared_server

jax = pytest.importorskip("jax", reason="the programs are exported with jax: pip install -e '.[bench]'")
from jax import export, lax  # noqa: E402  (after the skip)

jnp = jax.numpy
RNG = np.random.default_rng(39)


def _exported(fn, spec: str) -> bytes:
    shape = jax.ShapeDtypeStruct(export.symbolic_shape(spec), np.float32)
    return bytes(export.export(jax.jit(fn))(shape).mlir_module_serialized)


def _reference(fn, x) -> list[np.ndarray]:
    text = jax.jit(fn).lower(x).as_text()
    return [np.asarray(r) for r in shared_server().run(text.encode(), [x])]


CUMULATIVE = {
    "cumsum": lambda v: jnp.cumsum(v, axis=0),
    "cumprod": lambda v: jnp.cumprod(v, axis=0),
    "cummax": lambda v: lax.cummax(v, axis=0),
    "cumlogsumexp": lambda v: lax.cumlogsumexp(v, axis=0, reverse=True),
}


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
def test_cumulative_over_the_symbolic_dim(name):
    fn = CUMULATIVE[name]
    blob = _exported(fn, "b, 5")
    assert b"dynamic_reduce_window" in blob
    exe = xlac.compile(blob, cpu="x86-64-v3", cache=False)
    x = RNG.uniform(0.5, 1.5, (7, 5)).astype(np.float32)      # one shape: one compile
    got = exe(x)
    np.testing.assert_allclose(got, _reference(fn, x)[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, np.asarray(fn(x)), rtol=2e-6, atol=1e-7)


def test_approx_max_k_over_a_symbolic_batch():
    fn = lambda v: lax.approx_max_k(v, 3)  # noqa: E731
    exe = xlac.compile(_exported(fn, "b, 10"), cpu="x86-64-v3", cache=False)
    x = RNG.standard_normal((6, 10)).astype(np.float32)
    values, indices = exe(x)
    want_values, want_indices = _reference(lambda v: lax.top_k(v, 3), x)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)


def test_top_k_whose_k_is_symbolic():
    fn = lambda v: lax.top_k(v.reshape(1, -1), v.shape[0] // 2)  # noqa: E731
    blob = _exported(fn, "b")
    assert b"dynamic_top_k" in blob
    exe = xlac.compile(blob, cpu="x86-64-v3", cache=False)
    for size in (6, 11):
        x = RNG.standard_normal(size).astype(np.float32)
        for got, want, jax_said in zip(exe(x), _reference(fn, x), fn(x)):
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(got, np.asarray(jax_said))
