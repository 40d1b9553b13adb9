"""Differential fuzzing: random StableHLO programs, xlac against the interpreter.

hypothesis builds programs (fuzz_programs.py: elementwise chains,
broadcasts, reductions, dots, slices, concatenates, selects, converts over
rank 0-3 shapes and f32/f64/f16/bf16/i32/i8/ui8/i1) and inputs from a seed;
each is compiled and run by xlac and run by the StableHLO reference
interpreter, each in a long-lived child (xlac.reference.server), so a crash
of either is a failing example like any other. A mismatch is shrunk to a
minimal program, printed with its inputs. Derandomized, so CI runs the same
examples.

    pytest test/python/test_fuzz.py -s      # prints the example count and time
    XLAC_FUZZ_EXAMPLES=5000 XLAC_FUZZ_SEED=7 pytest ...   # a longer hunt elsewhere
"""

from __future__ import annotations

import os
import time

import ml_dtypes
import numpy as np
import pytest
from fuzz_programs import FLOATS, programs
from hypothesis import HealthCheck, given, note, seed, settings
from hypothesis import strategies as st

import xlac
from xlac.reference.server import ReferenceServer

EXAMPLES = int(os.environ.get("XLAC_FUZZ_EXAMPLES", "500"))
SEED = os.environ.get("XLAC_FUZZ_SEED", "")        # empty: derandomized, as in CI
# Allowed error in units of the element type's epsilon, relative to the
# larger of |expected| and 1: exact ops round the same way in both, but
# reductions and dots may sum in another order, and transcendental
# functions are not correctly rounded in either (measured: under 1 ulp).
ULPS = 4
TRANSCENDENTAL_ULPS = 16
_SPECIAL_FLOATS = (np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30, 1e-30)


@pytest.fixture(scope="module")
def children():
    with ReferenceServer(timeout=60) as reference, \
            ReferenceServer(timeout=120, backend="xlac") as compiler:
        yield reference, compiler


def make_inputs(program, seed: int, specials: bool) -> list[np.ndarray]:
    """Inputs for ``program``'s arguments; ``specials`` adds NaN, inf, -0, huge
    and tiny floats and full-range integers."""
    rng = np.random.default_rng(seed)
    return [_array(rng, arg.shape, arg.dtype, specials) for arg in program.args]


def _array(rng, shape, element: str, specials: bool) -> np.ndarray:
    dtype = xlac.TensorSpec(tuple(shape), element).dtype
    if element == "i1":
        return rng.random(shape) < 0.5
    if element in FLOATS:
        values = rng.standard_normal(shape) * rng.choice([1.0, 4.0])
        if specials:
            mask = rng.random(shape) < 0.3
            values = np.where(mask, rng.choice(_SPECIAL_FLOATS, size=shape), values)
        with np.errstate(over="ignore"):
            return np.asarray(values).astype(dtype)
    info = np.iinfo(dtype)
    low, high = (info.min, info.max) if specials else (max(info.min, -8), 16)
    return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)


def mismatch(got: np.ndarray, want: np.ndarray, ulps: int) -> str | None:
    """Why ``got`` is not ``want`` (None if it is, within ``ulps``)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}"
    if want.dtype.kind != "f" and want.dtype.name != "bfloat16":
        bad = got != want
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        eps = float(ml_dtypes.finfo(want.dtype).eps)
        with np.errstate(invalid="ignore"):
            close = np.abs(g - w) <= ulps * eps * np.maximum(np.abs(w), 1.0)
        bad = ~(close | (g == w) | (np.isnan(g) & np.isnan(w)))
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    return (f"{int(bad.sum())} of {bad.size} elements differ; at {list(where)}: "
            f"xlac {got[where]!r}, interpreter {want[where]!r}")


def test_xlac_matches_the_interpreter(children):
    reference, compiler = children
    seen = {"examples": 0}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not SEED, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @seed(int(SEED or 0))
    @given(program=programs(), seed=st.integers(0, 2**32 - 1), specials=st.booleans())
    def check(program, seed, specials):
        seen["examples"] += 1
        text = program.text()
        inputs = make_inputs(program, seed, specials)
        note(f"program:\n{text}inputs:\n" + "\n".join(repr(x) for x in inputs))
        want = reference.run(text.encode(), inputs)
        got = compiler.run(text.encode(), inputs)
        ulps = TRANSCENDENTAL_ULPS if program.transcendental else ULPS
        problems = [f"result {i}: {why}" for i, (g, w) in enumerate(zip(got, want))
                    if (why := mismatch(g, w, ulps))]
        assert not problems, "\n".join(problems) + f"\nprogram:\n{text}"

    start = time.perf_counter()
    check()
    print(f"\nfuzz: {seen['examples']} examples in {time.perf_counter() - start:.1f} s "
          f"(child restarts: interpreter {reference.restarts}, xlac {compiler.restarts})")
