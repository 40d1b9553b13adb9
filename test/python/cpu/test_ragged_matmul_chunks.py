"""A matmul whose m and n both miss the register tile (645 x 350 in 6 x 16
or 8 x 32 tiles) is still split among the threads: row chunks of whole
tiles, the last one short, each summed over k as on one thread (the
results are those of the unsplit matmul, bit for bit)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from plan_programs import matmul_plan

import xlac
from conftest import runnable_levels
from xlac.passes.cpu.plans.schedule_plan import Machine

AVX2, AVX512 = Machine(2, 32), Machine(2, 64)


@pytest.mark.parametrize("machine", [AVX2, AVX512])
def test_rows_split_though_no_tile_divides(machine):
    plan = matmul_plan(645, 1000, 350, machine)
    rows, columns = plan.params[:2]
    tm = plan.params[-2]
    assert 0 < rows < 645 and rows % tm == 0 and columns == 0


def test_one_thread_keeps_one_chunk():
    plan = matmul_plan(645, 1000, 350, Machine(1, 32))
    assert plan.params[:2] in ((0, 0), (645, 350))


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4", "host"])
def test_bf16_matmul_matches_one_f32_sum(cpu):
    m, k, n = 197, 300, 70
    text = (f"func.func @main(%a: tensor<{m}x{k}xbf16>, %b: tensor<{k}x{n}xbf16>) -> tensor<{m}x{n}xbf16> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            f"(tensor<{m}x{k}xbf16>, tensor<{k}x{n}xbf16>) -> tensor<{m}x{n}xbf16>\n"
            f"  return %0 : tensor<{m}x{n}xbf16>\n}}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    exe = xlac.compile(text, cpu=cpu, cache=False)
    if cpu not in runnable_levels(cpu):
        return
    [got] = exe.run(a, b)
    got = np.asarray(got).astype(np.float32)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)
