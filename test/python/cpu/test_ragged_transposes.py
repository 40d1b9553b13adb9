"""Transposes with ragged extents (no multiple of a 16 x 16 block) and batched
dot_generals whose batching dims are not leading or not neighbours (their
operands transposed first), in four element types, against numpy.

The blocked transposes peel a ragged dim's partial blocks and mask them
(passes/cpu/schedules/transpose_peeled.mlir). A masked edge block whose
tile skipped a memref dim ((b, i, h, d) -> (h, b, d, i), attention's K as
(b, h, d, i)) was once read as a transposing read whose map skips that dim,
and convert-vector-to-scf took its mask along the wrong dim: half an edge
block unread (GPT-2's heads product 0.3 off, NaN at x86-64-v3)."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import xlac
from conftest import runnable_levels

LEVELS = ["x86-64-v3", "host"]
# element: (its StableHLO name, numpy dtype, a dot's result element)
ELEMENTS = {"f32": ("f32", np.float32, "f32"), "bf16": ("bf16", ml_dtypes.bfloat16, "f32"),
            "i8": ("i8", np.int8, "i32"), "f64": ("f64", np.float64, "f64")}
_NUMPY_RESULT = {"f32": np.float32, "i32": np.int32, "f64": np.float64}

# a masked read: its map's name
_MASKED_READ = re.compile(r"vector\.transfer_read %\S+\[[^\]]*\], %\S+, %\S+ \{[^}]*permutation_map = (#map\d*)")
_MAP = re.compile(r"^(#map\d*) = affine_map<\((.*?)\) -> \((.*?)\)>", re.M)


def _masked_reads_skipping_dims(text: str) -> list[str]:
    """The maps of masked reads that transpose (2 vector dims or more, not in
    the memref's order) and skip a memref dim (no permutation of the minor
    dims): the form convert-vector-to-scf took the mask of along the wrong dim."""
    maps = {name: (dims.split(", "), results.split(", ")) for name, dims, results in _MAP.findall(text)}
    found = []
    for name in _MASKED_READ.findall(text):
        dims, results = maps[name]
        used = [dims.index(r) for r in results if r in dims]
        if len(used) > 1 and used != sorted(used) and sorted(used) != list(range(len(dims) - len(used), len(dims))):
            found.append(name)
    return found


def _tensor(shape, element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def _values(shape, dtype, rng) -> np.ndarray:
    if np.dtype(dtype).kind == "i":
        return rng.integers(-100, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _transpose(shape, permutation, element: str) -> str:
    t, o = _tensor(shape, element), _tensor([shape[p] for p in permutation], element)
    return (f"func.func @main(%x: {t}) -> {o} {{\n"
            f"  %0 = stablehlo.transpose %x, dims = {list(permutation)} : ({t}) -> {o}\n  return %0 : {o}\n}}\n")


# (shape, permutation)
TRANSPOSES = [
    ((2, 40, 3, 16), (2, 0, 3, 1)),     # attention's K to (h, b, d, i): the edge tile skips a dim
    ((40, 16, 3, 20), (2, 1, 3, 0)),    # both blocked dims ragged, a dim between them
    ((37, 5, 45), (2, 1, 0)),
    ((180, 2048), (1, 0)),              # rows 8 KiB apart
    ((1024, 180), (1, 0)),
    ((2, 19, 3, 4, 33), (4, 2, 0, 3, 1)),   # rank 5
    ((3, 40, 5, 2, 24), (0, 2, 4, 1, 3)),
]


@pytest.mark.parametrize("cpu", LEVELS)
@pytest.mark.parametrize("element", sorted(ELEMENTS))
@pytest.mark.parametrize(("shape", "permutation"), TRANSPOSES)
def test_ragged_transposes_are_exact(cpu, element, shape, permutation):
    name, dtype, _ = ELEMENTS[element]
    exe = xlac.compile(_transpose(shape, permutation, name), cpu=cpu, cache=False)
    assert not _masked_reads_skipping_dims(exe.as_text("bufferized"))
    if cpu in runnable_levels(cpu):
        x = _values(shape, dtype, np.random.default_rng(0))
        np.testing.assert_array_equal(exe(x), x.transpose(permutation))


def _dot(lhs, rhs, batch, contract, element: str, result: str) -> str:
    """dot_general(lhs, rhs) with batching dims ``batch`` = (lhs dims, rhs dims)
    and contracting dims ``contract``; the result's shape as StableHLO orders it."""
    free_l = [d for d in range(len(lhs)) if d not in batch[0] + contract[0]]
    free_r = [d for d in range(len(rhs)) if d not in batch[1] + contract[1]]
    out = [lhs[d] for d in batch[0]] + [lhs[d] for d in free_l] + [rhs[d] for d in free_r]
    tl, tr, to = _tensor(lhs, element), _tensor(rhs, element), _tensor(out, result)
    return (f"func.func @main(%a: {tl}, %b: {tr}) -> {to} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, batching_dims = {list(batch[0])} x {list(batch[1])}, "
            f"contracting_dims = {list(contract[0])} x {list(contract[1])} : ({tl}, {tr}) -> {to}\n"
            f"  return %0 : {to}\n}}\n")


# (lhs shape, rhs shape, batching dims, contracting dims, the numpy einsum)
DOTS = [
    # GPT-2/BERT heads: Q . K^T per (b, h), both as (b, i, h, d)
    ((2, 40, 2, 16), (2, 40, 2, 16), ([0, 2], [0, 2]), ([3], [3]), "bihd,bjhd->bhij"),
    ((2, 37, 3, 17), (2, 45, 3, 17), ([0, 2], [0, 2]), ([3], [3]), "bihd,bjhd->bhij"),
    # the weights times V: V as (b, j, h, d)
    ((2, 3, 37, 45), (2, 45, 3, 17), ([0, 1], [0, 2]), ([3], [1]), "bhij,bjhd->bhid"),
    # the batch dim last in both
    ((19, 23, 3), (23, 21, 3), ([2], [2]), ([1], [0]), "ikb,kjb->bij"),
    # batching dims apart, contracting dims apart from the free ones
    ((5, 33, 4, 18), (5, 18, 4, 29), ([0, 2], [0, 2]), ([3], [1]), "aibk,akbj->abij"),
]


def _expected(spec, a, b, result: str) -> np.ndarray:
    wide = np.int64 if result == "i32" else np.float64
    return np.einsum(spec, a.astype(wide), b.astype(wide))


@pytest.mark.parametrize("cpu", LEVELS)
@pytest.mark.parametrize("element", sorted(ELEMENTS))
@pytest.mark.parametrize(("lhs", "rhs", "batch", "contract", "spec"), DOTS)
def test_batched_dots_with_inner_batching_dims(cpu, element, lhs, rhs, batch, contract, spec):
    name, dtype, result = ELEMENTS[element]
    exe = xlac.compile(_dot(lhs, rhs, batch, contract, name, result), cpu=cpu, cache=False)
    assert not _masked_reads_skipping_dims(exe.as_text("bufferized"))
    if cpu not in runnable_levels(cpu):
        return
    rng = np.random.default_rng(2)
    a, b = _values(lhs, dtype, rng), _values(rhs, dtype, rng)
    got, want = np.asarray(exe(a, b)), _expected(spec, a, b, result)
    if result == "i32":
        np.testing.assert_array_equal(got, want.astype(np.int32))
    else:
        # bf16 operands are exact in f32; the sums' order differs
        tolerance = 1e-12 if result == "f64" else 1e-5
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.abs(want).max())


def _heads_from_projection(b: int, n: int, h: int, d: int) -> str:
    """Q . K^T per head, Q and K sliced out of one (b, n, 3, h, d) projection
    (strided views of it), batching dims [0, 2] x [0, 2]: GPT-2's heads."""
    x, one, qk = _tensor((b, n, 3, h, d), "f32"), _tensor((b, n, 1, h, d), "f32"), _tensor((b, n, h, d), "f32")
    out = _tensor((b, h, n, n), "f32")
    lines = [f"func.func @main(%x: {x}) -> {out} {{"]
    for name, part in (("q", 0), ("k", 1)):
        lines += [f"  %{name}s = stablehlo.slice %x [0:{b}, 0:{n}, {part}:{part + 1}, 0:{h}, 0:{d}] : ({x}) -> {one}",
                  f"  %{name} = stablehlo.reshape %{name}s : ({one}) -> {qk}"]
    lines += [f"  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] "
              f": ({qk}, {qk}) -> {out}", f"  return %0 : {out}", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("cpu", LEVELS)
@pytest.mark.parametrize("sizes", [(2, 40, 2, 16), (2, 37, 3, 24)])
def test_heads_sliced_from_one_projection(cpu, sizes):
    exe = xlac.compile(_heads_from_projection(*sizes), cpu=cpu, cache=False)
    if cpu in runnable_levels(cpu):
        b, n, h, d = sizes
        x = np.random.default_rng(3).standard_normal((b, n, 3, h, d), dtype=np.float32)
        want = np.einsum("bihd,bjhd->bhij", x[:, :, 0].astype(np.float64), x[:, :, 1].astype(np.float64))
        np.testing.assert_allclose(exe(x), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
