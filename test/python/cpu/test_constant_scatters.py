"""xla-constant-scatters-as-selects: `x.at[...]` and dynamic_update_slice at
constant indices become selects where a kernel takes them in; the results are
numpy's (and the same bits as the scatter kept), and the scatter stays where
it would be a kernel of its own anyway."""

from __future__ import annotations

import numpy as np
import pytest

import xlac

jax = pytest.importorskip("jax", reason="the programs are exported with jax: pip install -e '.[bench]'")
jnp, lax = jax.numpy, jax.lax

_PASS = "xla-constant-scatters-as-selects"
_RNG = np.random.default_rng(61)
_X = _RNG.standard_normal((8, 6)).astype(np.float32)
_X3 = _RNG.standard_normal((4, 5, 6)).astype(np.float32)
_I = _RNG.integers(-5, 5, (8, 6)).astype(np.int32)


def _set(x, index, value):
    y = np.array(x, copy=True)
    y[index] = value
    return y


# (name, jax function, argument, numpy's answer); each rewritten (no scatter left)
_REWRITTEN = [
    ("argmax_nan", lambda v: jnp.argmax(v.at[2, 3].set(jnp.nan), axis=1), _X,
     np.argmax(_set(_X, (2, 3), np.nan), axis=1)),       # numpy's too: a NaN is the first maximum
    ("row_from_a_row", lambda v: v.at[2].set(v[0]) * 2, _X, _set(_X, 2, _X[0]) * 2),
    ("column", lambda v: v.at[:, 3].set(jnp.arange(8.0)) + 1, _X, _set(_X, (slice(None), 3), np.arange(8.0)) + 1),
    ("point_add", lambda v: v.at[2, 3].add(1.0) * 2, _X, _set(_X, (2, 3), _X[2, 3] + 1) * 2),
    ("point_mul", lambda v: v.at[7, 0].mul(-3.0) - 1, _X, _set(_X, (7, 0), _X[7, 0] * -3) - 1),
    ("row_min", lambda v: v.at[0].min(-0.0) - 1, _X, _set(_X, 0, np.minimum(_X[0], -0.0)) - 1),
    ("row_range", lambda v: v.at[1:3].set(5.0) * 2, _X, _set(_X, slice(1, 3), 5.0) * 2),
    ("block_splat", lambda v: v.at[1:3, 2:4].set(5.0) * 2, _X, _set(_X, (slice(1, 3), slice(2, 4)), 5.0) * 2),
    ("negative_index", lambda v: v.at[-1, 2].set(5.0) * 2, _X, _set(_X, (7, 2), 5.0) * 2),
    ("repeated_add", lambda v: v.at[np.array([1, 1, 3])].add(5.0) * 2, _X,
     _set(_set(_X, 1, _X[1] + 10), 3, _X[3] + 5) * 2),
    ("repeated_set_last_wins", lambda v: v.at[np.array([1, 1])].set(np.array([[1.0] * 6, [2.0] * 6], np.float32)) * 2,
     _X, _set(_X, 1, 2.0) * 2),
    ("rows_of_updates", lambda v: v.at[np.array([6, 2])].set(v[:2] * 3) * 2, _X,
     _set(_set(_X, 6, _X[0] * 3), 2, _X[1] * 3) * 2),
    ("dropped", lambda v: v.at[np.array([9])].set(5.0, mode="drop") * 2, _X, _X * 2),
    ("update_slice", lambda v: lax.dynamic_update_slice(v, jnp.ones((2, 6)), (2, 0)) * 2, _X,
     _set(_X, slice(2, 4), 1.0) * 2),
    ("update_slice_clamped", lambda v: lax.dynamic_update_slice(v, v[:1] + 1, (20, 0)) * 2, _X,
     _set(_X, 7, _X[0] + 1) * 2),
    ("integer_add", lambda v: (v.at[2, 3].add(7) * 2), _I, _set(_I, (2, 3), _I[2, 3] + 7) * 2),
    ("integer_row_sums", lambda v: jnp.sum(v.at[0, 0].set(100), axis=1), _I, _set(_I, (0, 0), 100).sum(1)),
    ("bool", lambda v: (v > 0).at[1, 1].set(True) & (v < 1), _X, _set(_X > 0, (1, 1), True) & (_X < 1)),
    ("rank3_plane", lambda v: v.at[1, :, 2].set(0.5) * 2, _X3, _set(_X3, (1, slice(None), 2), 0.5) * 2),
    ("rank3_max", lambda v: jnp.max(v.at[3, 4, 5].set(9.0), axis=(1, 2)), _X3,
     _set(_X3, (3, 4, 5), 9.0).max(axis=(1, 2))),
    ("zeros_then_one", lambda v: jnp.zeros_like(v).at[2, 3].set(1.0) + v, _X, _set(np.zeros_like(_X), (2, 3), 1) + _X),
    ("chain", lambda v: v.at[0, 0].set(1.0).at[1, 1].set(2.0) * 2, _X, _set(_set(_X, (0, 0), 1), (1, 1), 2) * 2),
    ("complex", lambda v: (v + 1j * v).at[2, 3].set(1 + 2j) * 2, _X, _set(_X + 1j * _X, (2, 3), 1 + 2j) * 2),
]


def _compile(fn, arg, **kwargs):
    return xlac.compile(jax.jit(fn).lower(arg).as_text(), cpu="x86-64-v3", cache=False, **kwargs)


@pytest.mark.parametrize(("fn", "arg", "want"), [c[1:] for c in _REWRITTEN], ids=[c[0] for c in _REWRITTEN])
def test_constant_scatter_is_a_select_with_numpys_answer(fn, arg, want):
    exe = _compile(fn, arg)
    stablehlo = exe.as_text("stablehlo")
    assert "stablehlo.scatter" not in stablehlo and "dynamic_update_slice" not in stablehlo
    got = np.asarray(exe(arg))
    np.testing.assert_array_equal(got, want.astype(got.dtype) if got.dtype != want.dtype else want)
    kept = np.asarray(_compile(fn, arg, disable_passes=(_PASS,))(arg))
    np.testing.assert_array_equal(got, kept)             # the same bits as the scatter


def test_an_argmax_reads_the_selected_value_in_its_own_kernel():
    exe = _compile(lambda v: jnp.argmax(v.at[2, 3].set(jnp.nan), axis=1), _X)
    fused = exe.as_text("fused")
    assert fused.count('"xla.fusion"') == 1 and "stablehlo.select" in fused


# (name, jax function): each keeps its scatter
_KEPT = [
    # only returned, operand the caller's argument: a copy and a point write either way
    ("returned", lambda v: v.at[2, 3].set(1.0)),
    # dynamic indices
    ("dynamic", lambda v: v.at[jnp.argmax(v[:, 0])].set(1.0) * 2),
    # a window of its own elements over part of a dim
    ("part_of_a_dim", lambda v: v.at[1:3, 2:5].set(jnp.ones((2, 3)) * v[0, :3]) * 2),
    # read by a matmul: no kernel takes the select in
    ("into_a_dot", lambda v: v.at[2, 3].set(1.0) @ v.T),
    # a column sum's schedule would run the select on N x 1 vectors (scalar code)
    ("into_a_column_sum", lambda v: jnp.sum(v.at[2].add(1.0) * 2, axis=0)),
]


@pytest.mark.parametrize("fn", [c[1] for c in _KEPT], ids=[c[0] for c in _KEPT])
def test_a_scatter_no_kernel_takes_in_stays(fn):
    exe = _compile(fn, _X)
    assert "stablehlo.scatter" in exe.as_text("stablehlo")
    np.testing.assert_allclose(np.asarray(exe(_X)), np.asarray(jax.jit(fn)(_X)), rtol=1e-5, atol=1e-5)
