"""Softmax and layer norm rows as one kernel each (passes/gpu/row_chains.py,
gpu_kernel_rows.py): a block per row holding it in shared memory, the input read
once. The SIMT emulator runs them against the CPU target over row lengths with
tails, f32 and bf16, batch shapes; ptxas for sm_90 takes the PTX where installed."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.targets.cuda.ptx import ptxas, wheel_file
from xlac_emulator.simt import run_emulated

HAS_PTXAS = wheel_file("bin/ptxas") is not None


NEG_INF = {"f32": "0xFF800000", "bf16": "0xFF80"}


def _softmax(shape: tuple[int, ...], element: str) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    rows = f"tensor<{'x'.join(map(str, shape[:-1]))}x{element}>"
    keep = ", ".join(str(i) for i in range(len(shape) - 1))
    last = len(shape) - 1
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %ninf_t = stablehlo.constant dense<{NEG_INF[element]}> : tensor<{element}>
  %zero = stablehlo.constant dense<0.0> : tensor<{element}>
  %m = stablehlo.reduce(%x init: %ninf_t) applies stablehlo.maximum across dimensions = [{last}] : ({t}, tensor<{element}>) -> {rows}
  %mb = stablehlo.broadcast_in_dim %m, dims = [{keep}] : ({rows}) -> {t}
  %d = stablehlo.subtract %x, %mb : {t}
  %e = stablehlo.exponential %d : {t}
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [{last}] : ({t}, tensor<{element}>) -> {rows}
  %sb = stablehlo.broadcast_in_dim %s, dims = [{keep}] : ({rows}) -> {t}
  %r = stablehlo.divide %e, %sb : {t}
  return %r : {t}
}}"""


def _layernorm(shape: tuple[int, ...], element: str) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    rows = f"tensor<{'x'.join(map(str, shape[:-1]))}x{element}>"
    vec = f"tensor<{shape[-1]}x{element}>"
    keep = ", ".join(str(i) for i in range(len(shape) - 1))
    last = len(shape) - 1
    return f"""
func.func @main(%x: {t}, %g: {vec}, %b: {vec}) -> {t} {{
  %zero = stablehlo.constant dense<0.0> : tensor<{element}>
  %n = stablehlo.constant dense<{float(shape[-1])}> : {rows}
  %eps = stablehlo.constant dense<1.0e-5> : {rows}
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [{last}] : ({t}, tensor<{element}>) -> {rows}
  %mean = stablehlo.divide %s, %n : {rows}
  %mb = stablehlo.broadcast_in_dim %mean, dims = [{keep}] : ({rows}) -> {t}
  %c = stablehlo.subtract %x, %mb : {t}
  %sq = stablehlo.multiply %c, %c : {t}
  %v = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [{last}] : ({t}, tensor<{element}>) -> {rows}
  %var = stablehlo.divide %v, %n : {rows}
  %ve = stablehlo.add %var, %eps : {rows}
  %inv = stablehlo.rsqrt %ve : {rows}
  %ib = stablehlo.broadcast_in_dim %inv, dims = [{keep}] : ({rows}) -> {t}
  %y = stablehlo.multiply %c, %ib : {t}
  %gb = stablehlo.broadcast_in_dim %g, dims = [{last}] : ({vec}) -> {t}
  %bb = stablehlo.broadcast_in_dim %b, dims = [{last}] : ({vec}) -> {t}
  %yg = stablehlo.multiply %y, %gb : {t}
  %r = stablehlo.add %yg, %bb : {t}
  return %r : {t}
}}"""


def _compiled(text: str):
    exe = xlac.compile(text, target="cuda")
    if HAS_PTXAS:
        ptxas(exe.as_text("ptx"))
    return exe


def _check(text: str, rtol: float):
    """The cuda target, emulated, against the cpu target; the cuda executable."""
    cpu, cuda = xlac.compile(text), _compiled(text)
    rng = np.random.default_rng(0)
    inputs = [(3 * rng.standard_normal(s.shape)).astype(s.dtype) for s in cpu.signature.inputs]
    got, want = run_emulated(cuda, *inputs), cpu.run(*inputs)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=rtol, atol=rtol)
    return cuda


def _global_accesses(kernels: str, kind: str) -> list[str]:
    """The lines of ``kernels`` that load or store global memory (not shared)."""
    return [line for line in kernels.splitlines()
            if f"vector.{kind}" in line or (f"memref.{kind}" in line and "workgroup" not in line)]


RTOL = {"f32": 2e-6, "bf16": 2e-2}
SHAPES = [(5, 7), (3, 33), (4, 300), (2, 1000), (2, 1030), (2, 3, 64)]


@pytest.mark.parametrize("element", ["f32", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_softmax_is_one_kernel_reading_its_rows_once(shape, element):
    cuda = _check(_softmax(shape, element), RTOL[element])
    kernels = cuda.as_text("kernels")
    assert kernels.count("gpu.func") == 1
    # x read once from global memory, the result stored once; the exps stay on chip
    assert len(_global_accesses(kernels, "store")) == 1 and len(_global_accesses(kernels, "load")) == 1


@pytest.mark.parametrize("element", ["f32", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_layer_norm_is_one_kernel(shape, element):
    # layer norm in bf16 loses more digits between the two orders of summing
    cuda = _check(_layernorm(shape, element), RTOL[element] * (4 if element == "bf16" else 1e1))
    assert cuda.as_text("kernels").count("gpu.func") == 1


def test_aligned_rows_move_16_bytes_a_thread():
    ptx = _compiled(_softmax((4, 1024), "f32")).as_text("ptx")
    assert "ld.global.v4.b32" in ptx or "ld.global.v4.f32" in ptx
    assert "st.global.v4.b32" in ptx or "st.global.v4.f32" in ptx


def test_rows_too_long_for_shared_memory_keep_the_separate_kernels():
    cuda = xlac.compile(_softmax((2, 20000), "f32"), target="cuda")
    # max, exp + sum, divide; two rows split each reduction over blocks and a combining launch
    assert cuda.as_text("kernels").count("gpu.func") == 5


def test_a_value_read_after_the_chain_is_still_stored():
    # the row maxima are a result too: the kernel stores them as well as the softmax
    text = _softmax((3, 40), "f32").replace("return %r : tensor<3x40xf32>",
                                            "return %r, %m : tensor<3x40xf32>, tensor<3xf32>")
    text = text.replace("-> tensor<3x40xf32> {", "-> (tensor<3x40xf32>, tensor<3xf32>) {")
    cuda = _check(text, RTOL["f32"])
    assert cuda.as_text("kernels").count("gpu.func") == 1


def test_attention_scores_become_probabilities_in_one_row_kernel():
    # the softmax reads the matmul's output and writes its exps there in place: the
    # row kernel stores only the probabilities
    text = _softmax((2, 24, 40), "f32").replace("func.func @main(%x: tensor<2x24x40xf32>)", """
func.func @main(%q: tensor<2x24x16xf32>, %k: tensor<2x16x40xf32>)""").replace("{\n  %ninf_t", """{
  %x = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x24x16xf32>, tensor<2x16x40xf32>) -> tensor<2x24x40xf32>
  %ninf_t""", 1)
    cuda = _check(text, 1e-5)
    kernels = cuda.as_text("kernels")
    assert kernels.count("gpu.func") == 2          # the matmul, the softmax rows
    (rows,) = [m for m in kernels.split("gpu.module")[1:] if "math.exp" in m]
    assert len(_global_accesses(rows, "store")) == 1   # the probabilities, not the exps
