"""8-bit integer dots into i32 past the f32 bound: k in chunks each summed
exactly in f32, the chunks added in i32 (xla-widen-contractions,
exact_integer_chunks); i32 dots of extended 8-bit integers taken as 8-bit
dots; and on a CPU with a bf16 matmul kernel (AVX512-BF16, AMX) the exact
f32 matmuls of 8-bit integers on that kernel (xla-amx-contractions). Every
result is the wrapped i32 sum, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.cpu_model import host_features


def _dot_text(m: int, k: int, n: int, a: str, b: str, extend: bool) -> str:
    """``a[m x k] . b[k x n] -> i32``; ``extend``: both converted to i32 first (jnp's astype)."""
    ta, tb = f"tensor<{m}x{k}x{a}>", f"tensor<{k}x{n}x{b}>"
    if not extend:
        return (f"func.func @main(%a: {ta}, %b: {tb}) -> tensor<{m}x{n}xi32> {{\n"
                f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({ta}, {tb}) -> tensor<{m}x{n}xi32>\n"
                f"  return %0 : tensor<{m}x{n}xi32>\n}}\n")
    wa, wb = f"tensor<{m}x{k}xi32>", f"tensor<{k}x{n}xi32>"
    return (f"func.func @main(%a: {ta}, %b: {tb}) -> tensor<{m}x{n}xi32> {{\n"
            f"  %wa = stablehlo.convert %a : ({ta}) -> {wa}\n"
            f"  %wb = stablehlo.convert %b : ({tb}) -> {wb}\n"
            f"  %0 = stablehlo.dot_general %wa, %wb, contracting_dims = [1] x [0] : ({wa}, {wb}) -> tensor<{m}x{n}xi32>\n"
            f"  return %0 : tensor<{m}x{n}xi32>\n}}\n")


_NUMPY = {"i8": np.int8, "ui8": np.uint8}
_RANGE = {"i8": (-128, 128), "ui8": (0, 256)}


def _operands(m: int, k: int, n: int, a: str, b: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random 8-bit operands whose first rows of A and columns of B are their
    type's extreme (-128 or 255) over most of k: sums near the f32 bound."""
    rng = np.random.default_rng(seed)
    left = rng.integers(*_RANGE[a], (m, k)).astype(_NUMPY[a])
    right = rng.integers(*_RANGE[b], (k, n)).astype(_NUMPY[b])
    left[:3, : k - 5] = _RANGE[a][0] if a == "i8" else 255
    right[: k - 5, :3] = _RANGE[b][0] if b == "i8" else 255
    right[: k - 5, 3] = 127 if b == "i8" else 255
    return left, right


def _expected(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return (left.astype(np.int64) @ right.astype(np.int64)).astype(np.int32)


@pytest.mark.parametrize("level", runnable_levels("x86-64-v2", "x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("m, k, n, a, b, extend", [
    (37, 2051, 15, "i8", "i8", False),          # 2 chunks of k (1024 at most), odd m, n, k (n < 16: not
                                                # the integer kernel's, whose dots are whole-k i32: test_imad_dots)
    (9, 1031, 33, "ui8", "i8", True),           # jnp's astype(int32) of both: 3 chunks (512 at most)
    (17, 517, 5, "ui8", "ui8", False)])         # 3 chunks (258 at most)
def test_chunked_dots_are_the_wrapped_i32_sums(level, m, k, n, a, b, extend):
    left, right = _operands(m, k, n, a, b, seed=m + k)
    exe = xlac.compile(_dot_text(m, k, n, a, b, extend), cpu=level, cache=False)
    matmuls = [line for line in exe.as_text("linalg").splitlines() if "linalg.matmul" in line]
    assert matmuls and all("xi32>" not in line for line in matmuls)      # f32 dots, no i32 one
    result = exe(left, right)
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, _expected(left, right))


_HOST_BF16 = "avx512_bf16" in host_features()


@pytest.mark.skipif(not _HOST_BF16, reason="this host has no AVX512-BF16 (no bf16 matmul kernel)")
@pytest.mark.parametrize("a, b", [("i8", "i8"), ("ui8", "i8")])
def test_integer_dots_on_the_bf16_kernel_are_exact(a, b):
    """At the host level of a CPU with AVX512-BF16 (the dpbf16 kernel, or AMX's)
    each exact chunk's f32 matmul runs on the bf16 kernel: the same integers."""
    m, k, n = 67, 1100, 45
    left, right = _operands(m, k, n, a, b, seed=7)
    exe = xlac.compile(_dot_text(m, k, n, a, b, extend=False), cpu="host", cache=False)
    assert "xla.amx" in exe.as_text("bufferized")
    np.testing.assert_array_equal(exe(left, right), _expected(left, right))
