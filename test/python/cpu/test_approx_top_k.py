"""lax.approx_max_k / approx_min_k: jax writes `custom_call @ApproxTopK`, which
xlac compiles as the exact sort and slice XLA's CPU backend runs (it was
refused as code outside the program). Checked against the reference
interpreter running lax.top_k, and against jax."""

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

jax = pytest.importorskip("jax", reason="the programs are exported with jax: pip install -e '.[bench]'")
from jax import lax  # noqa: E402  (after the skip)

X = np.random.default_rng(39).standard_normal((6, 10)).astype(np.float32)


def _reference(fn, x) -> list[np.ndarray]:
    text = jax.jit(fn).lower(x).as_text()
    return [np.asarray(r) for r in shared_server().run(text.encode(), [x])]


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_approx_max_k_is_the_exact_top_k(cpu):
    text = jax.jit(lambda v: lax.approx_max_k(v, 3)).lower(X).as_text()
    assert "@ApproxTopK" in text
    values, indices = xlac.compile(text, cpu=cpu, cache=False).run(X)
    want_values, want_indices = _reference(lambda v: lax.top_k(v, 3), X)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_approx_min_k_along_the_first_dim(cpu):
    fn = lambda v: lax.approx_min_k(v, 2, reduction_dimension=0, recall_target=0.5)  # noqa: E731
    values, indices = xlac.compile(jax.jit(fn).lower(X).as_text(), cpu=cpu, cache=False).run(X)
    negated, transposed_indices = _reference(lambda v: lax.top_k(-v.T, 2), X)
    np.testing.assert_array_equal(values, -negated.T)
    np.testing.assert_array_equal(indices, transposed_indices.T)
    np.testing.assert_array_equal(values, np.asarray(jax.jit(fn)(X)[0]))


def test_approx_max_k_from_jax_export():
    """jax.export's comparator ends in func.return, not stablehlo.return."""
    exported = jax.export.export(jax.jit(lambda v: lax.approx_max_k(v, 4)))(X)
    values, indices = xlac.compile(exported.mlir_module_serialized, cpu="x86-64-v3", cache=False).run(X)
    want_values, want_indices = _reference(lambda v: lax.top_k(v, 4), X)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)


def test_approx_top_k_without_its_comparator_is_refused_by_name():
    text = jax.jit(lambda v: lax.approx_max_k(v, 3)).lower(X).as_text()
    text = text.replace("called_computations = [@top_k_gt_f32_comparator], ", "")
    with pytest.raises(xlac.CompileError, match="@ApproxTopK .* is compiled in the form jax writes"):
        xlac.compile(text, cpu="x86-64-v3", cache=False)
