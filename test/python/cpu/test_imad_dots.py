"""8-bit integer dots on the integer micro-kernel (xlac.targets.cpu.imad_kernels)
at x86-64-v3 and x86-64-v4, where no bf16 kernel is: a dot the kernel takes is
one i16 x i16 -> i32 matmul over its whole k on ``vpmaddwd``
(xla-widen-contractions integer-kernel=true, xla-amx-contractions integers=i16,
xla-amx-calls integer-kernel=...); the others keep exact f32 chunks. Every result is the wrapped
i32 sum, bit for bit: odd m, n and k (padded to 32), extremes over all of k,
batch dims, a transposed operand."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.cpu_model import CpuModel, cpu_model
from xlac.pipeline.pipelines import lower_to_linalg
from xlac.targets.cpu.pipeline import bufferize, has_integer_kernel, integer_kernel, lower_to_llvm

_NUMPY = {"i8": np.int8, "ui8": np.uint8}
_LOW = {"i8": -128, "ui8": 0}


def _text(shape_a, shape_b, a: str, b: str, dims: str, out) -> str:
    ta, tb = f"tensor<{'x'.join(map(str, shape_a))}x{a}>", f"tensor<{'x'.join(map(str, shape_b))}x{b}>"
    to = f"tensor<{'x'.join(map(str, out))}xi32>"
    return (f"func.func @main(%a: {ta}, %b: {tb}) -> {to} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, {dims} : ({ta}, {tb}) -> {to}\n"
            f"  return %0 : {to}\n}}\n")


def _operand(shape, kind: str, seed: int) -> np.ndarray:
    """Random 8-bit values, the first three rows (over all of the last dim) the extreme (-128 or 255)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(_LOW[kind], _LOW[kind] + 256, shape).astype(_NUMPY[kind])
    x[..., :3, :] = -128 if kind == "i8" else 255
    return x


def test_kernel_chosen_where_no_bf16_kernel():
    assert integer_kernel(cpu_model("x86-64-v3"), micro_kernels=True) == "pmaddwd256"
    assert integer_kernel(cpu_model("x86-64-v4"), micro_kernels=True) == "pmaddwd512"
    assert integer_kernel(cpu_model("x86-64-v3"), micro_kernels=False) is None
    assert integer_kernel(cpu_model("x86-64-v2"), micro_kernels=True) is None
    bf16 = CpuModel("host", (*cpu_model("x86-64-v4").features, "avx512_bf16", "avx512_vnni"))
    assert integer_kernel(bf16, micro_kernels=True) is None             # the bf16 kernel takes them
    vnni = CpuModel("host", (*cpu_model("x86-64-v4").features, "avx512_vnni"))
    assert integer_kernel(vnni, micro_kernels=True) == "vpdpwssd512"


def test_pipeline_text_names_the_kernel_only_where_given():
    assert "xla-amx-contractions{bf16=false integers=i16}" in bufferize(integer_kernel="pmaddwd256")
    assert not any("amx" in step for step in bufferize())
    assert "xla-amx-calls{threads=0 integer-kernel=pmaddwd256}" in lower_to_llvm(
        micro_kernels=True, integer_kernel="pmaddwd256")
    assert "xla-amx-calls{threads=0}" in lower_to_llvm(micro_kernels=True)
    assert "xla-widen-contractions{integer-kernel=true}" in lower_to_linalg(integer_kernel=True)
    assert "xla-widen-contractions" in lower_to_linalg()
    assert has_integer_kernel(xlac.Options.from_env().replace(cpu="x86-64-v3"))


@pytest.mark.parametrize("level", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("m, k, n, a, b", [(67, 1101, 45, "i8", "i8"),      # 2 chunks, all odd
                                           (64, 2049, 41, "ui8", "i8"),     # 5 chunks of at most 512
                                           (45, 515, 97, "ui8", "ui8")])    # 2 chunks of at most 258
def test_integer_kernel_dots_are_the_wrapped_i32_sums(level, m, k, n, a, b):
    left = _operand((m, k), a, seed=m)
    right = np.ascontiguousarray(_operand((n, k), b, seed=n).T)           # B's columns extreme over k
    exe = xlac.compile(_text((m, k), (k, n), a, b, "contracting_dims = [1] x [0]", (m, n)),
                       cpu=level, cache=False)
    assert "call @xlac_ukernel_imad_" in exe.as_text("llvm")
    expected = (left.astype(np.int64) @ right.astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(exe(left, right), expected)


@pytest.mark.parametrize("level", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_batched_and_transposed_integer_dots_are_exact(level):
    """Batch dims (a batch matmul on the kernel), and B contracted on its
    last dim (B transposed), both past the f32 bound."""
    left, right = _operand((3, 35, 1100), "i8", seed=1), _operand((3, 41, 1100), "i8", seed=2)
    text = _text((3, 35, 1100), (3, 41, 1100), "i8", "i8",
                 "batching_dims = [0] x [0], contracting_dims = [2] x [2]", (3, 35, 41))
    exe = xlac.compile(text, cpu=level, cache=False)
    expected = np.einsum("bmk,bnk->bmn", left.astype(np.int64), right.astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(exe(left, right), expected)


@pytest.mark.parametrize("level", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_batched_integer_dots_on_the_kernel_are_exact(level):
    """Batch dims as they lie (a batch matmul of the kernel's calls), past the f32 bound."""
    left, right = _operand((2, 67, 1100), "i8", seed=3), _operand((2, 1100, 40), "ui8", seed=4)
    text = _text((2, 67, 1100), (2, 1100, 40), "i8", "ui8",
                 "batching_dims = [0] x [0], contracting_dims = [2] x [1]", (2, 67, 40))
    exe = xlac.compile(text, cpu=level, cache=False)
    assert "call @xlac_ukernel_imad_" in exe.as_text("llvm")
    expected = np.einsum("bmk,bkn->bmn", left.astype(np.int64), right.astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(exe(left, right), expected)


@pytest.mark.parametrize("level", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("a, b", [("i8", "i8"), ("ui8", "i8"), ("ui8", "ui8")])
def test_kernel_dots_run_over_the_whole_k_in_i32(level, a, b):
    """A dot the kernel takes is one i16 x i16 -> i32 matmul over its whole k
    (3001: 3 to 12 f32 chunks without it): no f32 in the program, one kernel
    matmul; the wrapped i32 sums bit for bit."""
    m, k, n = 37, 3001, 50
    left = _operand((m, k), a, seed=5)
    right = np.ascontiguousarray(_operand((n, k), b, seed=6).T)
    exe = xlac.compile(_text((m, k), (k, n), a, b, "contracting_dims = [1] x [0]", (m, n)), cpu=level, cache=False)
    linalg = exe.as_text("linalg")
    assert "f32" not in linalg and linalg.count("linalg.matmul") == 1
    assert exe.as_text("llvm").count("call @xlac_ukernel_imad_") == 1
    expected = (left.astype(np.int64) @ right.astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(exe(left, right), expected)


@pytest.mark.parametrize("result, numpy_type", [("i64", np.int64), ("i8", np.int8)])
def test_whole_k_dots_into_other_integers(result, numpy_type):
    """An i64 result of a dot whose sums fit an i32 is its i32 dot sign-extended;
    an i8 result its i32 dot wrapped to 8 bits: both the exact sums' bits."""
    m, k, n = 40, 2050, 33
    left, right = _operand((m, k), "i8", seed=7), _operand((k, n), "i8", seed=8)
    text = _text((m, k), (k, n), "i8", "i8", "contracting_dims = [1] x [0]", (m, n)).replace(
        f"{m}x{n}xi32", f"{m}x{n}x{result}")
    exe = xlac.compile(text, cpu="x86-64-v3", cache=False)
    assert "f32" not in exe.as_text("linalg")
    expected = (left.astype(np.int64) @ right.astype(np.int64)).astype(numpy_type)
    np.testing.assert_array_equal(exe(left, right), expected)


def test_transposed_and_small_dots_keep_the_f32_chunks():
    """Dots the kernel does not take (B contracted on its last dim; m x n x k
    under its min-work) keep the exact f32 chunks (not one slow i32 dot)."""
    transposed = _text((35, 1100), (41, 1100), "i8", "i8", "contracting_dims = [1] x [1]", (35, 41))
    small = _text((8, 1100), (1100, 8), "i8", "i8", "contracting_dims = [1] x [0]", (8, 8))
    for text in (transposed, small):
        assert "xf32>" in xlac.compile(text, cpu="x86-64-v3", cache=False).as_text("linalg")
