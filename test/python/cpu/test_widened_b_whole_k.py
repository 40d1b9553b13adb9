"""AVX2's matmul with B made by a widening (bf16 or f16 weights summed in
f32) widens all of a k up to WHOLE_K into one block of each chunk's columns,
as the f32 plan packs its whole-k block, in place of BLOCK-deep panels each
a pass over C (whole_k_blocks.whole_k_widened_b_avx2; the sweep's
`dot_general bf16 row` at x86-64-v3, issue 39). AVX-512 and k of one BLOCK
keep their plans; the sums run over k in order either way."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from plan_programs import matmul_plan

import xlac
from conftest import runnable_levels
from xlac.passes.cpu.plans.schedule_plan import Machine

AVX2, AVX512 = Machine(2, 32), Machine(2, 64)     # x86-64-v3 and -v4 on two threads


@pytest.mark.parametrize("m, k, n, params", [
    (512, 512, 512, (0, 64, 64, 512, 6, 16)),       # the sweep's 512^3: the f32 plan's blocks
    (256, 1024, 1024, (0, 128, 64, 1024, 6, 16)),   # mlp_bf16_f32acc's first dot
])
def test_avx2_widens_all_of_k_into_one_block(m, k, n, params):
    plan = matmul_plan(m, k, n, AVX2, b_widened=True)
    assert (plan.sequence, plan.params, len(plan.members)) == ("xla_matmul_block_packed_fused_b", params, 1)


@pytest.mark.parametrize("m, k, n, machine, sequence", [
    (512, 512, 512, AVX512, "xla_matmul_fused_b"),  # AVX-512: its fused panels (A's widening too)
    (512, 256, 512, AVX2, "xla_matmul_fused_b_short_k_avx2"),   # k one BLOCK: its short-k panels
    (512, 2048, 512, AVX2, "xla_matmul_fused_b"),   # k past WHOLE_K: the BLOCK-deep panels
])
def test_other_widened_b_keep_their_plan(m, k, n, machine, sequence):
    assert matmul_plan(m, k, n, machine, b_widened=True).sequence == sequence


def test_sweep_bf16_dot_at_x86_64_v3_is_right():
    """The sweep's bf16 512^3 (f32 sums, rounded once to bf16) compiled at
    x86-64-v3: within bf16's rounding of f32 sums."""
    t = "tensor<512x512xbf16>"
    text = (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({t}, {t}) -> {t}\n"
            f"  return %0 : {t}\n}}")
    exe = xlac.compile(text, cpu="x86-64-v3", cache=False)
    assert "scalar loops" not in exe.fusion_report()
    if runnable_levels("x86-64-v3") != ["x86-64-v3"]:
        pytest.skip("x86-64-v3 code runs only where the host has AVX2")
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal((512, 512), dtype=np.float32).astype(ml_dtypes.bfloat16) for _ in range(2))
    expected = a.astype(np.float32) @ b.astype(np.float32)
    got = np.asarray(exe(a, b)).astype(np.float32)
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=1e-2 * np.abs(expected).max())
