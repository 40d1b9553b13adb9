"""The one-pass top-k at k >= 128 with AVX-512 (pipelines.COUNTED_TOP_K): an element
finds its slot by counting the better keys with vector compares and the worse
ones move down a vector at a time; with AVX2, the walk. Results bit for bit
XLA's (ties: the earlier element first) at each CPU level, on random rows, on many ties, and
on ascending rows (every element inserted at the top, the whole buffer moved)."""

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax", reason="the programs are lowered with jax: pip install -e '.[bench]'")
from jax import lax  # noqa: E402  (after the skip)

ROWS, N = 3, 600


def _rows(kind: str, dtype) -> np.ndarray:
    rng = np.random.default_rng(11)
    if kind == "ties":
        x = rng.integers(-3, 4, (ROWS, N))
    else:
        x = rng.standard_normal((ROWS, N)) * 100
        if kind == "ascending":
            x = np.sort(x, axis=1)
    return x.astype(dtype)


_CASES = [(301, dtype, kind) for dtype in (np.float32, np.float64, np.int32)
          for kind in ("random", "ties", "ascending")] + [(128, np.float32, "ties")]


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("k, dtype, kind", _CASES)
def test_counted_insert_is_xla_bit_for_bit(cpu, dtype, kind, k):
    x = _rows(kind, dtype)
    fn = jax.jit(lambda v: lax.top_k(v, k))
    with jax.enable_x64(dtype == np.float64):         # else jax computes f64 in f32
        text, want = fn.lower(x).as_text(), fn(x)
    values, indices = xlac.compile(text, cpu=cpu, cache=False).run(x)
    want_values, want_indices = (np.asarray(r) for r in want)
    np.testing.assert_array_equal(np.asarray(values).view(np.uint8), want_values.view(np.uint8))
    np.testing.assert_array_equal(np.asarray(indices), want_indices)


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_large_k_counts_with_avx512_and_walks_with_avx2(cpu):
    """Compiled only: no x86-64-v4 code runs."""
    x = _rows("random", np.float32)
    text = jax.jit(lambda v: lax.top_k(v, 200)).lower(x).as_text()
    linalg = xlac.compile(text, cpu=cpu, cache=False).as_text("linalg")   # the kernel inlined
    counted = cpu == "x86-64-v4"
    assert ("vector.create_mask" in linalg) == counted and ("scf.while" in linalg) != counted
