"""AVX2's whole-k packed blocks start their register tiles from zeros
(@xla_matmul_block_packed_zero_start): no zero fill pass over C and no read
of C in each tile (the micro-kernel's accumulate = 0), the same sums in the
same k order as @xla_matmul_block_packed, so the same bits."""

from __future__ import annotations

import re

import numpy as np
import pytest
from plan_programs import matmul_plan

import xlac
from xlac.passes.cpu import apply_schedules
from xlac.passes.cpu.plans.contraction_plan import ZERO_START
from xlac.passes.cpu.plans.schedule_plan import Machine, Plan

AVX2 = Machine(2, 32)
ZEN4 = Machine(2, 64, 32 << 10)


@pytest.mark.parametrize("m, k, n, machine, params", [
    (1024, 1024, 1024, AVX2, (0, 128, 64, 1024, 6, 16)),          # the `matmul` program
    (1024, 1024, 1024, Machine(1, 32), (1024, 1024, 64, 1024, 6, 16)),
    (768, 768, 768, AVX2, (0, 64, 64, 768, 6, 16)),
    (512, 1024, 256, AVX2, (0, 32, 32, 1024, 6, 16)),              # BERT's MLP down: two tiles a block
    (512, 1024, 256, Machine(2, 16), (0, 32, 32, 1024, 6, 8)),     # x86-64-v2
])
def test_whole_k_blocks_start_from_zeros(m, k, n, machine, params):
    plan = matmul_plan(m, k, n, machine)
    assert plan.sequence == ZERO_START and plan.params == params


@pytest.mark.parametrize("m, k, n, machine", [
    (788, 768, 192, AVX2),        # ViT's MLP down: blocks one tile wide
    (512, 256, 1024, AVX2),       # k one 256 block: no whole-k block
    (1536, 2048, 1536, AVX2),     # k beyond 1024: 256-deep blocks, C read back
    (1024, 1024, 1024, ZEN4),     # AVX-512's plans unchanged
])
def test_other_block_plans_keep_their_sequence(m, k, n, machine):
    assert matmul_plan(m, k, n, machine).sequence != ZERO_START


def _dot(m: int, k: int, n: int) -> str:
    return (f"func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            f"(tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>\n"
            f"  return %0 : tensor<{m}x{n}xf32>\n}}")


def _compile(m: int, k: int, n: int, threads: int) -> xlac.Executable:
    return xlac.compile(_dot(m, k, n), cpu="x86-64-v3", cache=False,
                        options=xlac.Options.from_env().replace(num_threads=threads))


def _accumulate_arguments(llvm: str) -> set[str]:
    """The constant each micro-kernel call passes as ``accumulate`` (its last argument)."""
    found = set()
    for function in llvm.split("llvm.func ")[1:]:        # SSA names are per function
        constants = dict(re.findall(r"(%\w+) = llvm\.mlir\.constant\((-?\d+) : i64\) : i64", function))
        calls = re.findall(r"llvm\.call @xlac_ukernel_f32_\d+x\d+\([^)]*?(%\w+)\)", function)
        found |= {constants.get(argument, argument) for argument in calls}
    assert found
    return found


@pytest.mark.parametrize("m, k, n, threads", [(200, 300, 64, 1), (202, 300, 256, 2)])
def test_tiles_start_from_zeros_and_sum_as_before(m, k, n, threads, monkeypatch):
    """x86-64-v3: every micro-kernel call (the 6-row tiles and the peeled row
    edge) starts from zeros, and C equals the plain sequence's bit for bit."""
    zero_start = _compile(m, k, n, threads)
    assert _accumulate_arguments(zero_start.as_text("llvm")) == {"0"}
    planned = apply_schedules.contraction_plan

    def plain(op, machine, fuse_producers=True):
        plan = planned(op, machine, fuse_producers)
        if plan is not None and plan.sequence == ZERO_START:
            return Plan("xla_matmul_block_packed", plan.params, plan.members)
        return plan

    monkeypatch.setattr(apply_schedules, "contraction_plan", plain)
    before = _compile(m, k, n, threads)
    assert _accumulate_arguments(before.as_text("llvm")) == {"1"}
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    got, want = np.asarray(zero_start(a, b)), np.asarray(before(a, b))
    assert got.tobytes() == want.tobytes()
    np.testing.assert_allclose(got, a @ b, rtol=2e-5, atol=2e-4)
