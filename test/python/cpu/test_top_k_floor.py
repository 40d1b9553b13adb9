"""The top-k's floor under the k-th best (top_k_threshold.py): on rows long
enough, the least of the best keys of k (rounded up to vectors) strided
groups is found first, and only elements above it and the k-th best so far
are inserted, so an ascending row costs ~2k inserts, not n. Results bit for
bit XLA's (and the interpreter's) at each CPU level, on one input of random,
ascending, descending, many-equal and NaN/inf/-0 rows, and on rows whose
floor is the least key (INT_MIN, -NaN's key)."""

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

jax = pytest.importorskip("jax", reason="the programs are lowered with jax: pip install -e '.[bench]'")
from jax import lax  # noqa: E402  (after the skip)


def _rows(n: int, dtype) -> np.ndarray:
    """Rows: random, ascending, descending, 7 values, specials (floats) or
    INT_MIN among values (ints), all the least value."""
    rng = np.random.default_rng(5)
    random = rng.standard_normal(n) * 100
    ties = rng.integers(-3, 4, n).astype(np.float64)
    rows = [random, np.sort(random), -np.sort(random), ties]
    if np.issubdtype(dtype, np.floating):
        special = random.copy()
        special[::7], special[3::11], special[5::13] = np.nan, -np.nan, np.inf
        special[6::17], special[8::19] = -0.0, 0.0
        rows += [special, np.full(n, -np.nan)]
        return np.stack(rows).astype(dtype)
    least = np.iinfo(dtype).min
    mixed = np.where(rng.random(n) < 0.5, least, random)
    rows = np.stack(rows + [mixed, np.zeros(n)]).astype(dtype)
    rows[-1] = least
    return rows


def _top_k(x: np.ndarray, k: int, cpu: str):
    fn = jax.jit(lambda v: lax.top_k(v, k))
    text, want = fn.lower(x).as_text(), fn(x)
    return text, xlac.compile(text, cpu=cpu, cache=False), [np.asarray(w) for w in want]


def _assert_same(got, want):
    np.testing.assert_array_equal(np.asarray(got[0]).view(np.uint8), want[0].view(np.uint8))
    np.testing.assert_array_equal(np.asarray(got[1]), want[1])


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("k", [8, 16, 128, 300])
def test_floored_top_k_is_xla_bit_for_bit(cpu, dtype, k):
    x = _rows(2500, dtype)                  # k = 300: 304 groups, 8 chunks
    _, exe, want = _top_k(x, k, cpu)
    _assert_same(exe.run(x), want)


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_floored_top_k_is_the_interpreters(cpu):
    """Without the NaN rows: the interpreter's top-k of a row with NaNs is not
    in order (its comparator is no order there: 0x7FC00000, inf, -201, ...);
    XLA's and xlac's are, before the floor and with it."""
    x = _rows(400, np.float32)[:4]         # k = 16: 16 groups, 25 chunks
    x[3, 6::17], x[3, 8::19], x[3, 5::13] = -0.0, 0.0, np.inf
    text, exe, _ = _top_k(x, 16, cpu)
    _assert_same(exe.run(x), [np.asarray(r) for r in shared_server().run(text.encode(), [x])])


@pytest.mark.parametrize("n, k, floored", [(8000, 300, True), (8000, 16, True), (700, 300, False),
                                           (8000, 8, False)])
def test_floor_from_k_16_on_rows_of_four_chunks(n, k, floored):
    """Compiled only (x86-64-v3): the floor's minimum of the groups' bests."""
    x = np.zeros((2, n), np.float32)
    text = jax.jit(lambda v: lax.top_k(v, k)).lower(x).as_text()
    linalg = xlac.compile(text, cpu="x86-64-v3", cache=False).as_text("linalg")
    assert ("vector.reduction <minsi>" in linalg) == floored
