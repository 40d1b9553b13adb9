"""Shape-polymorphic jax.export programs (symbolic dims): jax writes
`custom_call @shape_assertion` checks of the dims into each; xlac refused every
such program as calling outside code. Now decided per call shape
(xla-check-shape-assertions), the results checked against the reference
interpreter running the same function lowered for the concrete shape."""

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

jax = pytest.importorskip("jax", reason="the programs are exported with jax: pip install -e '.[bench]'")
from jax import export  # noqa: E402  (after the skip)

jnp = jax.numpy
RNG = np.random.default_rng(39)


def _exported(fn, spec: str) -> bytes:
    shape = jax.ShapeDtypeStruct(export.symbolic_shape(spec), np.float32)
    exported = export.export(jax.jit(fn))(shape)
    assert "shape_assertion" in exported.mlir_module()
    return bytes(exported.mlir_module_serialized)


def _reference(fn, x) -> np.ndarray:
    text = jax.jit(fn).lower(x).as_text()
    return np.asarray(shared_server().run(text.encode(), [x])[0])


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_symbolic_batch_runs_at_each_shape(cpu):
    exe = xlac.compile(_exported(jax.nn.softmax, "b, 16"), cpu=cpu, cache=False)
    for rows in (3, 7):
        x = RNG.standard_normal((rows, 16)).astype(np.float32)
        np.testing.assert_allclose(exe(x), _reference(jax.nn.softmax, x), rtol=1e-6, atol=1e-7)


def test_a_failing_assertion_says_jaxs_message():
    """`2*b` rows: 5 is not even; jax's message, with the dims' values, not a refusal."""
    pairs = lambda v: v.reshape(v.shape[0] // 2, 2, 4).sum(1)  # noqa: E731
    exe = xlac.compile(_exported(pairs, "2*b, 4"), cpu="x86-64-v3", cache=False)
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    np.testing.assert_allclose(exe(x), _reference(pairs, x), rtol=1e-6)
    with pytest.raises(xlac.CompileError, match="shape assertion failed: .*remainder 1"):
        exe(np.zeros((5, 4), np.float32))


def test_a_scalar_beside_a_symbolic_argument():
    """lax.cond's predicate, a numpy scalar: the specialization was made for f32[1]
    (np.ascontiguousarray makes 0-d arrays 1-d) and refused."""
    branch = lambda p, v: jax.lax.cond(p > 0, jnp.sin, jnp.cos, v)  # noqa: E731
    specs = [jax.ShapeDtypeStruct((), np.float32),
             jax.ShapeDtypeStruct(export.symbolic_shape("b"), np.float32)]
    blob = bytes(export.export(jax.jit(branch))(*specs).mlir_module_serialized)
    exe = xlac.compile(blob, cpu="x86-64-v3", cache=False)
    x = RNG.standard_normal(5).astype(np.float32)
    for p in (np.float32(-1), np.float32(2)):
        text = jax.jit(branch).lower(p, x).as_text()
        want = np.asarray(shared_server().run(text.encode(), [np.asarray(p), x])[0])
        np.testing.assert_allclose(exe(p, x), want, rtol=1e-6)
