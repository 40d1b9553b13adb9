"""xla-lane-arg-reductions on narrow types and middle axes: jnp.argmax and
jnp.argmin of bool, 8- and 16-bit integers, bf16 and f16 (widened to 32-bit
lanes in registers), over rows, columns and a middle axis of a 3-D or 4-D
array, give jax's indices bit for bit (ties: the first index; NaN the max of
argmax and the min of argmin; -0.0 ties +0.0), as vector loops: no "not
scheduled" remark, where the scalar loops had one."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax")
jnp = jax.numpy
ml_dtypes = pytest.importorskip("ml_dtypes")

_PASS = "xla-lane-arg-reductions"
_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "bfloat16", "float16"]
_CASES = [((37, 45), 0), ((37, 45), 1), ((6, 33, 19), 1), ((5, 7, 3, 20), 1), ((5, 7, 3, 20), 2),
          ((4, 9, 18), 0), ((300,), 0), ((9, 16), 1)]


def _dtype(name: str):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def _values(shape, name: str, seed: int = 5) -> np.ndarray:
    """Few distinct values (ties), extremes; floats: NaNs, infinities, zeros of
    both signs, an all-NaN, an all -inf and an alternating -0.0/+0.0 row."""
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) < 0.05
    dtype = _dtype(name)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = (rng.integers(-3, 4, size=shape) % (int(info.max) + 1 if info.min == 0 else 1 << 40)).astype(dtype)
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, max(1, flat.size // 40))] = info.max
        flat[rng.integers(0, flat.size, max(1, flat.size // 40))] = info.min
        return x
    x = rng.integers(-2, 3, size=shape).astype(np.float32)
    flat = x.reshape(-1)
    where = rng.random(flat.size) < 0.1
    flat[where] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32), int(where.sum()))
    rows = x.reshape(-1, shape[-1])
    if rows.shape[0] > 4:
        rows[0], rows[1], rows[3] = np.nan, -np.inf, np.where(np.arange(shape[-1]) % 2, 0.0, -0.0)
    return x.astype(dtype)


def _compiled(fn, x, level, **kwargs):
    return xlac.compile(jax.jit(fn).lower(x).as_text(), cpu=level, cache=False, **kwargs)


@pytest.mark.parametrize("level", ["host", "x86-64-v3"])
@pytest.mark.parametrize("name", _DTYPES)
@pytest.mark.parametrize("direction", ["argmax", "argmin"])
def test_narrow_as_jax(level, name, direction):
    """Every case in one program (a kernel each; one direction a program: an
    argmax and an argmin of one array share their iota, see below)."""
    if level not in runnable_levels(level):
        pytest.skip(f"{level} does not run here")
    xs = [_values(shape, name, seed) for seed, (shape, _) in enumerate(_CASES)]
    fn, reference = getattr(jnp, direction), getattr(np, direction)

    def program(*vs):
        return [fn(v, axis=axis) for v, (_, axis) in zip(vs, _CASES)]
    exe = xlac.compile(jax.jit(program).lower(*xs).as_text(), cpu=level, cache=False)
    got, want = exe(*xs), jax.jit(program)(*xs)
    for x, (shape, axis), g, w in zip(xs, _CASES, got, want):
        g, w = np.asarray(g), np.asarray(w)
        wide = x.astype(np.float32) if name in ("bfloat16", "float16") else x
        assert g.dtype == w.dtype, (shape, axis)
        np.testing.assert_array_equal(g, w, err_msg=f"{shape} {axis}")
        np.testing.assert_array_equal(g, reference(wide, axis=axis), err_msg=f"{shape} {axis}")
    assert "not scheduled" not in exe.fusion_report()


def test_argmax_and_argmin_of_one_array():
    """An argmax and an argmin of one array (one shared iota after CSE) are
    each a vector loop (xla-duplicate-index-producers gives each its copy of
    the iota); the answers are jax's."""
    x = _values((37, 45), "int8")
    program = lambda v: (jnp.argmax(v, axis=0), jnp.argmin(v, axis=0))   # noqa: E731
    exe = _compiled(program, x, "host")
    assert "not scheduled" not in exe.fusion_report()
    for g, w in zip(exe(x), jax.jit(program)(x)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("level", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("name,axis", [("bool", 1), ("int8", 0), ("bfloat16", 1), ("float16", 0),
                                       ("float32", 1)])
def test_vector_loops_not_scalar(level, name, axis):
    """Compiled for either level: compares on 16 32-bit lanes (the narrow
    values widened; rows at x86-64-v3 as two pairs of 8, one ymm each), no
    "not scheduled" remark; without the pass no vector compare at all (the
    scalar loops)."""
    shape = (64, 96) if name != "float32" else (8, 64, 40)
    width = 8 if level == "x86-64-v3" and axis == len(shape) - 1 else 16
    lanes = f"vector<{width}xf32>" if "float" in name else f"vector<{width}xi32>"
    x = _values(shape, name)
    program = (lambda a: lambda v: jnp.argmax(v, axis=a))(axis)
    exe = _compiled(program, x, level)
    assert lanes in _vector_compares(exe.as_text("llvm"))
    assert "not scheduled" not in exe.fusion_report()
    assert lanes not in _vector_compares(_compiled(program, x, level, disable_passes=(_PASS,)).as_text("llvm"))


def _vector_compares(lowered: str) -> set:
    """The vector types the LLVM dialect's compares take."""
    return {word.strip(",") for line in lowered.splitlines() if "llvm.icmp" in line or "llvm.fcmp" in line
            for word in line.split() if word.startswith("vector<")}


def test_bool_without_i1_vectors():
    """With xla-i1-memory-as-i8 disabled (i1 vectors would move as bits) a bool
    argmax keeps its scalar loops, named as such, and its answer."""
    x = _values((40, 70), "bool")
    program = lambda v: jnp.argmax(v, axis=1)                 # noqa: E731
    exe = _compiled(program, x, "host", disable_passes=("xla-i1-memory-as-i8",))
    assert "not scheduled" in exe.fusion_report()
    np.testing.assert_array_equal(np.asarray(exe(x)), np.argmax(x, axis=1))


def _arg_reduce(x, axis):
    """lax.reduce of (value, index) that returns both: the integer maxima are
    exact whatever the grouping, so the vector loops take it."""
    from jax import lax
    index = lax.broadcasted_iota(jnp.int32, x.shape, axis)

    def combine(a, b):
        (av, ai), (bv, bi) = a, b
        pick = (av > bv) | ((av == bv) & (ai < bi))
        return lax.select(pick, av, bv), lax.select(pick, ai, bi)
    low = np.array(False) if x.dtype == np.bool_ else np.array(np.iinfo(x.dtype).min, x.dtype)
    return lax.reduce((x, index), (low, np.int32(0)), combine, (axis,))


@pytest.mark.parametrize("name", ["bool", "int8", "uint16"])
def test_values_returned(name):
    """Narrow maxima returned too (narrowed back from the lanes): jax's, bit for bit."""
    for shape, axis in (((37, 45), 0), ((37, 45), 1), ((6, 33, 19), 1)):
        x = _values(shape, name)
        program = (lambda a: lambda v: _arg_reduce(v, a))(axis)
        exe = _compiled(program, x, "host")
        for g, w in zip(exe(x), jax.jit(program)(x)):
            g, w = np.asarray(g), np.asarray(w)
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w, err_msg=f"{shape} {axis}")
        assert "not scheduled" not in exe.fusion_report()
