"""Transposes whose input and output walk different dims contiguously move
16x16 blocks through registers (passes/cpu/schedules/transpose.mlir), not
16 elements gathered one by one per vector; every permutation stays exact."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.context import new_context
from xlac.mlir import ir
from xlac.passes.cpu import apply_schedules
from xlac.passes.cpu.plans.schedule_plan import Machine, plan_for
from xlac.pipeline import pipelines
from xlac.pipeline.pass_manager import run_passes

# (shape, permutation, the plan's sequence)
CASES = [
    ((4, 128, 4, 64), (0, 2, 3, 1), "xla_transpose_blocks_4d"),   # attention's K as [b, h, d, s]
    ((4, 4, 64, 128), (0, 3, 1, 2), "xla_transpose_blocks_4d"),   # its output back to [b, s, h, d]
    ((64, 32, 48), (2, 0, 1), "xla_transpose_blocks_3d"),
    ((8, 96, 64), (0, 2, 1), "xla_transpose_3d"),                  # the innermost two swapped
    ((8, 197, 3, 64), (0, 2, 3, 1), "xla_elementwise_4d"),         # 197: no whole blocks
    ((4, 128, 4, 64), (0, 2, 1, 3), "xla_elementwise_4d"),         # both walk the last dim
]


def _program(shape, permutation) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    o = f"tensor<{'x'.join(str(shape[p]) for p in permutation)}xf32>"
    dims = ", ".join(map(str, permutation))
    return (f"func.func @main(%x: {t}) -> {o} {{\n"
            f"  %0 = stablehlo.transpose %x, dims = [{dims}] : ({t}) -> {o}\n  return %0 : {o}\n}}\n")


@pytest.mark.parametrize(("shape", "permutation", "sequence"), CASES)
def test_transpose_plan(shape, permutation, sequence):
    with new_context():
        module = ir.Module.parse(_program(shape, permutation))
        run_passes(module, pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg())
        [op] = [op for op in apply_schedules._linalg_ops(module.operation)
                if op.name in ("linalg.transpose", "linalg.generic")]
        assert plan_for(op, Machine(2, 64)).sequence == sequence


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4", "host"])
@pytest.mark.parametrize(("shape", "permutation", "sequence"), CASES)
def test_transposes_are_exact(cpu, shape, permutation, sequence):
    exe = xlac.compile(_program(shape, permutation), cpu=cpu, cache=False)
    if "blocks" in sequence:
        assert "vector.transpose" in exe.as_text("bufferized")
    if cpu in runnable_levels(cpu):
        x = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
        np.testing.assert_array_equal(exe(x), x.transpose(permutation))
