"""AVX-512's (x86-64-v4) plans for B made by a transpose fused into its panels
(GPT-2's [n, k] weights: the LM head, the projections with their bias and
residual, the k = 1024 MLP dot) and for a batch matmul whose k is past one
block with B in L2 (attention's P.V): one thread loop each, no transpose of B
and, where k is one block or B fits L2, no zero fill of C. Compiled at
x86-64-v4 everywhere; run where the host has AVX-512, where each output must
be x86-64-v3's bit for bit (both sum each element over k in order from 0, one
FMA a step, in their own tile shapes) and close to numpy's."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels


def _dense(rows: int, k: int, n: int, epilogue: bool) -> str:
    """x [2, rows, k] . w^T with w [n, k], as PyTorch's Linear keeps it; with
    ``epilogue`` + bias + residual (GPT-2's projections)."""
    t = f"tensor<2x{rows}x{n}xf32>"
    args = f"%x: tensor<2x{rows}x{k}xf32>, %w: tensor<{n}x{k}xf32>"
    body = (f"  %d = stablehlo.dot_general %x, %w, contracting_dims = [2] x [1] : "
            f"(tensor<2x{rows}x{k}xf32>, tensor<{n}x{k}xf32>) -> {t}\n")
    result = "%d"
    if epilogue:
        args += f", %b: tensor<{n}xf32>, %r: {t}"
        body += (f"  %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<{n}xf32>) -> {t}\n"
                 f"  %s = stablehlo.add %d, %bb : {t}\n  %e = stablehlo.add %r, %s : {t}\n")
        result = "%e"
    return f"func.func @main({args}) -> {t} {{\n{body}  return {result} : {t}\n}}"


def _batch(batch: int, m: int, k: int, n: int) -> str:
    return (f"func.func @main(%a: tensor<{batch}x{m}x{k}xf32>, %b: tensor<{batch}x{k}x{n}xf32>)"
            f" -> tensor<{batch}x{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]"
            f" : (tensor<{batch}x{m}x{k}xf32>, tensor<{batch}x{k}x{n}xf32>) -> tensor<{batch}x{m}x{n}xf32>\n"
            f"  return %0 : tensor<{batch}x{m}x{n}xf32>\n}}")


CASES = {
    # name: (program, input shapes, zero fill left: k in blocks, C read back per block)
    "lm_head": (_dense(32, 128, 2048, False), [(2, 32, 128), (2048, 128)], False),
    "projection": (_dense(64, 256, 256, True), [(2, 64, 256), (256, 256), (256,), (2, 64, 256)], False),
    "mlp_out_k_1024": (_dense(128, 1024, 256, True), [(2, 128, 1024), (256, 1024), (256,), (2, 128, 256)], True),
    "p_v": (_batch(2, 64, 512, 64), [(2, 64, 512), (2, 512, 64)], False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_avx512_plan_is_one_thread_loop_and_matches_avx2_bit_for_bit(name):
    text, shapes, fill = CASES[name]
    exe = xlac.compile(text, cpu="x86-64-v4", cache=False)
    assert "not scheduled:" not in exe.fusion_report()
    bufferized = exe.as_text("bufferized")
    # B made, C summed, the epilogue: one kernel, one thread loop
    assert bufferized.count("func.func") == 1 and bufferized.count("scf.forall") == 1
    assert "linalg.transpose" not in bufferized and "linalg.generic" not in bufferized
    assert ("vector.transfer_write %cst" in bufferized) == fill, "zero fill of C"
    if "x86-64-v4" not in runnable_levels("x86-64-v4"):
        pytest.skip("this CPU cannot run x86-64-v4 code (compiled and scheduled: checked)")
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape, dtype=np.float32) for shape in shapes]
    got = np.asarray(exe(*inputs))
    avx2 = np.asarray(xlac.compile(text, cpu="x86-64-v3", cache=False)(*inputs))
    np.testing.assert_array_equal(got, avx2)
    x, w = inputs[:2]
    expected = np.matmul(x, w) if name == "p_v" else x @ w.T
    if len(inputs) == 4:
        expected = inputs[3] + (expected + inputs[2])
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=5e-4)
