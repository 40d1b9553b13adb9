"""Segment sums and embedding bags as jax exports them, against the reference interpreter.

`jax.ops.segment_sum(table[ids] * w[:, None], segments, n, indices_are_sorted=True)`
is a row scatter-add with `indices_are_sorted`, its updates a gather times a
weight: xlac runs it in parallel chunks that own disjoint rows, computing each
update row where it adds it (no materialized updates). Unsorted ids keep the
one-at-a-time loop. Both must give the interpreter's sums: empty segments,
out-of-range segment ids (dropped) and negative table ids (jnp wraps them).
"""

import numpy as np
import pytest

import xlac
from xlac.reference.server import shared_server

jax = pytest.importorskip("jax", reason="the programs are exported with jax: pip install -e '.[bench]'")

from jax import export  # noqa: E402  (after the skip)

_SEGMENTS = 12


def _exported(fn, *args) -> str:
    return export.export(jax.jit(fn))(*args).mlir_module()


def _bag(sorted_ids: bool):
    def bag(table, ids, weights, segments):
        return jax.ops.segment_sum(table[ids] * weights[:, None], segments, _SEGMENTS,
                                   indices_are_sorted=sorted_ids)
    return bag


def _inputs(rows: int, rng) -> list[np.ndarray]:
    """300 ids into a 50-row table, segments 2..9 only (the rest empty), a few
    segment ids out of range at both ends, a few negative table ids."""
    table = rng.standard_normal((50, 8)).astype(np.float32)
    ids = rng.integers(-5, 50, rows).astype(np.int32)
    weights = rng.standard_normal(rows).astype(np.float32)
    segments = np.sort(rng.integers(2, 10, rows)).astype(np.int32)
    segments[:3], segments[-4:] = -1, _SEGMENTS + 3
    return [table, ids, weights, segments]


def _check(text: str, inputs, parallel: bool) -> None:
    """xlac's sums are the interpreter's, in chunks or not as said (a chunk
    starts where a run does: the while loop finding it is the sign)."""
    exe = xlac.compile(text, cache=False)
    assert ("scf.while" in exe.as_text("linalg")) == parallel
    (want,) = shared_server().run(text.encode(), inputs)
    np.testing.assert_allclose(np.asarray(exe(*inputs)), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows", [1, 7, 300, 2500])
def test_embedding_bag_with_sorted_segments(rows):
    """2,500 ids make three parallel chunks, whose borders fall inside runs."""
    inputs = _inputs(rows, np.random.default_rng(rows))
    text = _exported(_bag(True), *inputs)
    assert "indices_are_sorted = true" in text
    exe = xlac.compile(text, cache=False)
    assert "stablehlo.gather" not in exe.as_text("linalg")       # the updates are not materialized
    _check(text, inputs, parallel=True)


def test_embedding_bag_with_unsorted_segments():
    inputs = _inputs(300, np.random.default_rng(0))
    inputs[3] = np.random.default_rng(1).permutation(inputs[3])
    _check(_exported(_bag(False), *inputs), inputs, parallel=False)


@pytest.mark.parametrize("sorted_ids", [True, False])
def test_segment_sum_of_plain_rows(sorted_ids):
    """No gather in front: the updates are an argument, sliced a row at a time."""
    rng = np.random.default_rng(3)
    data = rng.standard_normal((3000, 5)).astype(np.float32)
    segments = np.sort(rng.integers(0, 40, 3000)).astype(np.int32)
    segments[segments == 7] = 8                                # an empty segment
    if not sorted_ids:
        segments = rng.permutation(segments)
    text = _exported(lambda d, s: jax.ops.segment_sum(d, s, 40, indices_are_sorted=sorted_ids),
                     data, segments)
    _check(text, [data, segments], parallel=sorted_ids)


def test_segment_max_of_a_vector_with_all_ids_equal():
    """One run over every chunk border; a 0-d window; max, not add."""
    data = np.random.default_rng(4).standard_normal(3000).astype(np.float32)
    segments = np.full(3000, 2, np.int32)
    text = _exported(lambda d, s: jax.ops.segment_max(d, s, 4, indices_are_sorted=True),
                     data, segments)
    _check(text, [data, segments], parallel=True)
