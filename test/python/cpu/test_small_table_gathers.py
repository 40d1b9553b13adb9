"""xla-small-table-gathers-as-selects and xla-scalar-scatter-indices: a
gather from a table of at most 16 entries is a chain of selects (the same
elements, clamped indices included), and a scatter reads its [M, 1] ids as
[M]; jnp.histogram's counts are numpy's, bit for bit the unrewritten
program's, with no gather and no [M, 1] index tensor left."""

from __future__ import annotations

import numpy as np
import pytest

import xlac

jax = pytest.importorskip("jax")
jnp = jax.numpy

_PASSES = ("xla-small-table-gathers-as-selects", "xla-scalar-scatter-indices")


def _both(fn, *args):
    text = jax.jit(fn).lower(*args).as_text()
    return xlac.compile(text, cpu="x86-64-v3"), xlac.compile(text, cpu="x86-64-v3", disable_passes=_PASSES)


@pytest.mark.parametrize("bins", [5, 15])
def test_histogram_counts_are_numpys(bins):
    rng = np.random.default_rng(39)
    v = rng.standard_normal(10007).astype(np.float32)
    v[:6] = [2.0, -2.0, np.nan, np.inf, -np.inf, 0.0]        # the last edge, outside, NaN
    fn = lambda v: jnp.histogram(v, bins=bins, range=(-2.0, 2.0))[0]   # noqa: E731
    exe, plain = _both(fn, v)
    stablehlo = exe.as_text("stablehlo")
    assert "stablehlo.gather" not in stablehlo and "x1xi32>" not in stablehlo
    assert "stablehlo.gather" in plain.as_text("stablehlo")
    got = exe(v)
    np.testing.assert_array_equal(got, plain(v))
    np.testing.assert_array_equal(got, np.histogram(v, bins=bins, range=(-2.0, 2.0))[0])


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8])
def test_a_table_lookup_clamps_its_indices_as_the_gather(dtype):
    table = np.array([-0.0, 1.5, np.nan, -7.0, np.inf, 3.25], np.float32)
    low = -5 if np.issubdtype(dtype, np.signedinteger) else 0
    ids = np.arange(low, 12).astype(dtype)
    ids = np.concatenate([ids, np.array([np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)])
    fn = lambda t, i: jax.lax.gather(   # noqa: E731
        t, i[:, None], jax.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                                      start_index_map=(0,)),
        slice_sizes=(1,), mode=jax.lax.GatherScatterMode.CLIP)
    exe, plain = _both(fn, table, ids)
    assert "stablehlo.gather" not in exe.as_text("stablehlo")
    got = exe(table, ids)
    want = table[np.clip(ids.astype(np.int64), 0, len(table) - 1)]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    np.testing.assert_array_equal(got.view(np.uint32), np.asarray(plain(table, ids)).view(np.uint32))


def test_searchsorted_over_a_short_table_is_numpys():
    edges = np.array([-1.0, -0.25, 0.0, 0.5, 3.0], np.float32)
    v = np.random.default_rng(4).uniform(-4, 4, (64, 33)).astype(np.float32)
    exe, plain = _both(lambda e, v: jnp.searchsorted(e, v, side="right"), edges, v)
    assert "stablehlo.gather" not in exe.as_text("stablehlo")
    np.testing.assert_array_equal(exe(edges, v), np.searchsorted(edges, v, side="right"))
    np.testing.assert_array_equal(exe(edges, v), plain(edges, v))


def test_a_bincount_scatter_reads_its_ids_whole():
    ids = np.random.default_rng(5).integers(-3, 9, 4099).astype(np.int32)
    exe, plain = _both(lambda i: jnp.zeros(6, jnp.int32).at[i].add(1, mode="drop"), ids)
    assert "x1xi32>" not in exe.as_text("stablehlo")
    wrapped = np.where(ids < 0, ids + 6, ids)                # jax's negative indices count from the end
    want = np.bincount(wrapped[wrapped < 6], minlength=6)
    np.testing.assert_array_equal(exe(ids), want)
    np.testing.assert_array_equal(exe(ids), plain(ids))
