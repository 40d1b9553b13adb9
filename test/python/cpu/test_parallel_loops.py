"""Ops no vector schedule takes still run on every core: their scalar loops
are split among the threads (passes/cpu/schedules/parallel_loops.mlir), never
a reduction loop, and a remark says so."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import MASKED_ROW_MAX, runnable_levels
from xlac.passes.cpu.plans.parallel_loops_plan import parallel_loops_plan
from xlac.passes.cpu.plans.schedule_plan import Machine

TWO_THREADS = xlac.Options().replace(num_threads=2)


def _inputs(exe) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(spec.shape).astype(spec.dtype) if spec.dtype != np.bool_
            else rng.random(spec.shape) < 0.7 for spec in exe.signature.inputs]


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4", "host"])
def test_masked_row_max_split_among_threads_is_right(cpu):
    # i1 vectors off (the pass that makes them byte moves disabled): no vector schedule takes it
    exe = xlac.compile(MASKED_ROW_MAX, cpu=cpu, cache=False, options=TWO_THREADS,
                       disable_passes=("xla-i1-memory-as-i8",))
    assert "scalar loops split among the threads" in exe.fusion_report()
    assert "omp.parallel" in exe.as_text("llvm")
    if cpu in runnable_levels(cpu):
        x, keep = _inputs(exe)
        np.testing.assert_array_equal(exe(x, keep), np.where(keep, x, -np.inf).max(axis=1))


_MASKED_MAX_LINALG = """func.func @main(%x: tensor<512x256xf32>, %keep: tensor<512x256xi1>,
                    %init: tensor<512xf32>) -> tensor<512xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %keep : tensor<512x256xf32>, tensor<512x256xi1>) outs(%init : tensor<512xf32>) {
  ^bb0(%in: f32, %k: i1, %out: f32):
    %low = arith.constant 0xFF800000 : f32
    %v = arith.select %k, %in, %low : f32
    %m = arith.maximumf %out, %v : f32
    linalg.yield %m : f32
  } -> tensor<512xf32>
  return %r : tensor<512xf32>
}"""


def test_reduction_loops_are_never_split():
    from xlac.context import new_context
    from xlac.mlir import ir
    from xlac.passes.cpu import apply_schedules

    with new_context():
        module = ir.Module.parse(_MASKED_MAX_LINALG)
        [op] = [op for op in apply_schedules._linalg_ops(module.operation)
                if op.name == "linalg.generic"]
        plan = parallel_loops_plan(op, Machine(2, 64))
        assert plan.sequence == "xla_parallel_loops_2d"
        rows, reduction = plan.params
        assert reduction == 0 and 0 < rows < 512 and 512 % rows == 0
        assert parallel_loops_plan(op, Machine(1, 64)) is None     # one thread: nothing to split


_TRANSPOSED_READ_OF_A_SLICE = """func.func @main(%x: tensor<64x64xf32>, %init: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %s = tensor.extract_slice %x[0, 0] [32, 32] [1, 1] : tensor<64x64xf32> to tensor<32x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<32x32xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = tensor.extract %s[%j, %i] : tensor<32x32xf32>
    linalg.yield %v : f32
  } -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}"""


def test_no_vector_gather_from_a_slice():
    """The vectorizer indexes a gather's tensor as if dense; a slice is a
    strided view once bufferized, so a body gathering from one gets no vector
    schedule (its loops are split among the threads instead)."""
    from xlac.context import new_context
    from xlac.mlir import ir
    from xlac.passes.cpu.plans.schedule_plan import plan_for

    with new_context():
        module = ir.Module.parse(_TRANSPOSED_READ_OF_A_SLICE)
        from xlac.passes.cpu import apply_schedules
        [op] = [op for op in apply_schedules._linalg_ops(module.operation) if op.name == "linalg.generic"]
        plan = plan_for(op, Machine(2, 64))
        assert plan is None or plan.sequence.startswith("xla_parallel_loops")
        unsliced = ir.Module.parse(_TRANSPOSED_READ_OF_A_SLICE.replace(
            "%v = tensor.extract %s[%j, %i]", "%v = tensor.extract %x[%j, %i]").replace(
            ": tensor<32x32xf32>\n    linalg.yield", ": tensor<64x64xf32>\n    linalg.yield"))
        [op] = [op for op in apply_schedules._linalg_ops(unsliced.operation) if op.name == "linalg.generic"]
        assert plan_for(op, Machine(2, 64)).sequence == "xla_elementwise_2d"
