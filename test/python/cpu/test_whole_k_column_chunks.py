"""Thread chunks of whole columns for the whole-k packed blocks: chunks of
rows each packed every block of B again (1024^3 on two threads, AVX-512:
B's 4 MiB packed eight times); chunks of columns pack each block once."""

from __future__ import annotations

import numpy as np
import pytest
from plan_programs import matmul_plan

import xlac
from conftest import runnable_levels
from xlac.passes.cpu.plans.schedule_plan import Machine

ZEN4 = Machine(2, 64, 32 << 10)        # AVX-512, a 32 KiB L1: the whole-k block from 16 row tiles
XEON = Machine(2, 64, 48 << 10)        # AVX-512, a 48 KiB L1: from 32 row tiles
AVX2 = Machine(2, 32)


@pytest.mark.parametrize("m, k, n, machine, params", [
    (1024, 1024, 1024, ZEN4, (0, 128, 128, 1024, 8, 32)),     # eight chunks of one block each
    (2048, 1024, 1024, XEON, (0, 128, 128, 1024, 8, 32)),
    (1024, 1024, 4096, ZEN4, (0, 512, 128, 1024, 8, 32)),     # four blocks a chunk
    (4096, 1024, 256, ZEN4, (1024, 128, 128, 1024, 8, 32)),   # two blocks: rows split too
    (768, 768, 768, AVX2, (0, 64, 64, 768, 6, 16)),           # AVX2: twelve chunks of one block
])
def test_whole_k_blocks_in_column_chunks(m, k, n, machine, params):
    plan = matmul_plan(m, k, n, machine)
    assert plan.sequence.startswith("xla_matmul_block_packed") and plan.params == params


@pytest.mark.parametrize("m, k, n, machine, sequence, params", [
    # row chunks too short for the whole-k block keep their plan (the panels)
    (1024, 1024, 1024, XEON, "xla_matmul", (128, 0, 0, 256, 256, 8, 32)),
    (768, 768, 768, ZEN4, "xla_matmul", (96, 0, 0, 256, 256, 8, 32)),
    # one block of B: nothing packed twice
    (1024, 512, 256, ZEN4, "xla_matmul_block_packed", (128, 0, 256, 512, 8, 32)),
    # k beyond WHOLE_K: blocks of 256, row chunks kept
    (1536, 2048, 1536, AVX2, "xla_matmul_block_packed", (192, 0, 256, 256, 6, 16)),
])
def test_other_plans_keep_their_chunks(m, k, n, machine, sequence, params):
    plan = matmul_plan(m, k, n, machine)
    assert plan.sequence == sequence and plan.params == params


def _dot(m: int, k: int, n: int) -> str:
    return (f"func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            f"(tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>\n"
            f"  return %0 : tensor<{m}x{n}xf32>\n}}")


def _one_and_two_threads(m: int, k: int, n: int, cpu: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    one, two = (xlac.compile(_dot(m, k, n), cpu=cpu, cache=False,
                             options=xlac.Options.from_env().replace(num_threads=threads))(a, b)
                for threads in (1, 2))
    return one, two, a @ b


def test_avx2_column_chunks_sum_as_one_core():
    """x86-64-v3, 384 x 512 x 256 on two threads: chunks of 96 rows and 128
    columns (row chunks of 48 before), the same sums as one thread's one
    chunk, bit for bit."""
    assert matmul_plan(384, 512, 256, AVX2).params[:2] == (96, 128)
    if runnable_levels("x86-64-v3") != ["x86-64-v3"]:
        pytest.skip("x86-64-v3 code runs only where the host has AVX2")
    one, two, want = _one_and_two_threads(384, 512, 256, "x86-64-v3")
    np.testing.assert_array_equal(two, one)
    np.testing.assert_allclose(two, want, rtol=2e-5, atol=2e-4)


def test_avx512_column_chunks_sum_as_one_core(monkeypatch):
    """x86-64-v4 with a 32 KiB L1 (set as a Zen 4 host's would be; a named
    level has none), 1024 x 512 x 512 on two threads: chunks of 256 rows
    and 256 columns (row chunks of 128 before), bit for bit one thread's."""
    assert matmul_plan(1024, 512, 512, ZEN4).params[:2] == (256, 256)
    if runnable_levels("x86-64-v4") != ["x86-64-v4"]:
        pytest.skip("x86-64-v4 code runs only where the host has AVX-512")
    from xlac import cpu_model
    monkeypatch.setattr(cpu_model.CpuModel, "l1d_bytes", property(lambda self: 32 << 10))
    one, two, want = _one_and_two_threads(1024, 512, 512, "x86-64-v4")
    np.testing.assert_array_equal(two, one)
    np.testing.assert_allclose(two, want, rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("m, k, n, machine, params", [
    (512, 1024, 256, AVX2, (0, 32, 32, 1024, 6, 16)),           # BERT's MLP down: chunks of 2 tiles
    (788, 768, 192, AVX2, (0, 16, 16, 768, 6, 16)),             # ViT's: chunks of 1 tile
    (512, 1024, 256, Machine(2, 16), (0, 32, 32, 1024, 6, 8)),  # x86-64-v2: 4 tiles of 8
    (788, 768, 192, Machine(2, 16), (0, 24, 24, 768, 6, 8)),    # ... 3
])
def test_narrow_chunks_are_one_whole_k_block_on_16_registers(m, k, n, machine, params):
    """x86-64-v3 and -v2: a thread chunk of fewer columns than
    MIN_WHOLE_K_TILES tiles is one whole-k block all the same (was: 256-deep
    blocks, each a pass over the chunk's C); A is read once per chunk either
    way. AVX-512 keeps its plans (BERT's MLP down: the 256-deep panels)."""
    plan = matmul_plan(m, k, n, machine)
    assert plan.sequence.startswith("xla_matmul_block_packed") and plan.params == params
    assert matmul_plan(m, k, n, ZEN4).sequence == "xla_matmul"


def test_narrow_whole_k_chunks_are_right():
    """x86-64-v3, 96 x 512 x 32 on two threads: chunks of 12 rows, all 32
    columns one 512-deep block (two 256-deep ones before), bit for bit one
    thread's plan and close to numpy's."""
    assert matmul_plan(96, 512, 32, AVX2).params[2:4] == (32, 512)
    if runnable_levels("x86-64-v3") != ["x86-64-v3"]:
        pytest.skip("x86-64-v3 code runs only where the host has AVX2")
    one, two, want = _one_and_two_threads(96, 512, 32, "x86-64-v3")
    np.testing.assert_array_equal(two, one)
    np.testing.assert_allclose(two, want, rtol=2e-5, atol=2e-4)
