"""A column sum over a transposed operand reads its tile of each row as an
``N x 1`` vector, transposed (`xla_reduce_outer_2d` on `jnp.einsum("ii->i")`:
the diagonal as a masked sum over rows). xla-flatten-minor-transfers makes that
read and the ops on it 1-D: LLVM would keep ``N`` one-lane vectors, and without
mask registers (AVX2) select each lane with a compare and a branch. The sums
are the same, bit for bit."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

LEVELS = ("x86-64-v3", "x86-64-v4")


def _einsum(spec: str, n: int, m: int) -> str:
    """``jnp.einsum(spec, a)`` on an n x m f32 matrix, as JAX lowers it."""
    t = f"tensor<{n}x{m}xf32>"
    b = f"tensor<{n}x{m}xi1>"
    out, dims = ("tensor<f32>", "[0, 1]") if spec == "ii->" else (f"tensor<{m}xf32>", "[0]")
    return f"""func.func @main(%a: {t}) -> {out} {{
  %0 = stablehlo.iota dim = 0 : tensor<{n}x{m}xui32>
  %1 = stablehlo.iota dim = 1 : tensor<{n}x{m}xui32>
  %2 = stablehlo.compare EQ, %0, %1, UNSIGNED : (tensor<{n}x{m}xui32>, tensor<{n}x{m}xui32>) -> {b}
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %3 = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> {t}
  %4 = stablehlo.select %2, %a, %3 : {b}, {t}
  %5 = stablehlo.reduce(%4 init: %z) applies stablehlo.add across dimensions = {dims} : ({t}, tensor<f32>) -> {out}
  return %5 : {out}
}}"""


def _unit_vectors(exe) -> set[str]:
    """The LLVM arrays of one-lane vectors (an ``N x 1`` vector's form) in the kernels."""
    text = exe.as_text("llvm")
    return set(re.findall(r"!llvm\.array<\d+ x vector<1x\w+>>", text))


@pytest.mark.parametrize("cpu", LEVELS)
@pytest.mark.parametrize("n", [2000, 300, 77])
def test_a_diagonal_reads_rows_as_flat_vectors(cpu, n):
    exe = xlac.compile(_einsum("ii->i", n, n), cache=False, cpu=cpu)
    assert not _unit_vectors(exe), _unit_vectors(exe)
    if runnable_levels(cpu):
        a = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
        a[3, 3] = -0.0                                    # the masked sum's +0.0 start makes it +0.0
        got = np.asarray(exe(a)).reshape(-1)
        want = np.float32(0.0) + np.diag(a)
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("cpu", LEVELS)
def test_a_rectangular_diagonal_and_a_trace(cpu):
    a = np.random.default_rng(5).standard_normal((300, 500)).astype(np.float32)
    exe = xlac.compile(_einsum("ii->i", 300, 500), cache=False, cpu=cpu)
    trace = xlac.compile(_einsum("ii->", 300, 300), cache=False, cpu=cpu)
    assert not _unit_vectors(exe)
    if runnable_levels(cpu):
        want = np.zeros(500, np.float32)
        want[:300] = np.diag(a)
        assert np.asarray(exe(a)).reshape(-1).tobytes() == (np.float32(0.0) + want).tobytes()
        np.testing.assert_allclose(np.asarray(trace(a[:, :300])).reshape(()), np.trace(a[:, :300]), rtol=1e-5)
