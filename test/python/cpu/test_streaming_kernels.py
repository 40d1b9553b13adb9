"""A kernel that only streams a few MiB (a broadcast, an iota, an add) runs on
the calling thread: its threads' fork-join cost more than it saved
(chunks.STREAMING_SERIAL_BYTES, docs/PERFORMANCE.md "Small write-mostly
kernels"). Kernels with math calls, and big streams, are still split."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.passes.cpu.plans.chunks import STREAMING_SERIAL_BYTES, streams_alone
from xlac.passes.cpu.plans.schedule_plan import Machine, moved_bytes, plan_for

TWO_THREADS = xlac.Options().replace(num_threads=2)


def _broadcast_linalg(rows: int, body: str = "linalg.yield %in : f32", read: str = "(d0)",
                      input_type: str = "") -> str:
    """A generic writing rows x 1024 f32 from an input read through ``read``."""
    input_type = input_type or f"tensor<{rows}xf32>"
    return f"""func.func @main(%v: {input_type}, %init: tensor<{rows}x1024xf32>) -> tensor<{rows}x1024xf32> {{
  %r = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> {read}>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%v : {input_type}) outs(%init : tensor<{rows}x1024xf32>) {{
  ^bb0(%in: f32, %out: f32):
    {body}
  }} -> tensor<{rows}x1024xf32>
  return %r : tensor<{rows}x1024xf32>
}}"""


_EXP_BODY = "%e = math.exp %in : f32\n    linalg.yield %e : f32"


def _plan(text: str, machine: Machine):
    from xlac.context import new_context
    from xlac.mlir import ir
    from xlac.passes.cpu import apply_schedules

    with new_context():
        module = ir.Module.parse(text)
        [op] = [op for op in apply_schedules._linalg_ops(module.operation) if op.name == "linalg.generic"]
        return plan_for(op, machine), moved_bytes(op)


@pytest.mark.parametrize("machine", [Machine(2, 64), Machine(16, 32), Machine(64, 64)])
def test_a_small_broadcast_is_one_chunk_whatever_the_threads(machine):
    plan, moved = _plan(_broadcast_linalg(512), machine)
    assert moved == (512 * 4, 512 * 1024 * 4)         # the vector read, the 2 MiB written
    assert plan.sequence == "xla_elementwise_2d"
    assert plan.params[:2] == (512, 1024)              # the whole nest: no scf.forall to split


@pytest.mark.parametrize("machine", [Machine(2, 64), Machine(16, 32)])
def test_math_and_big_streams_are_still_split(machine):
    exp_plan, _ = _plan(_broadcast_linalg(512, _EXP_BODY), machine)
    assert exp_plan.params[:2] != (512, 1024)          # the iterations decide, as before
    big_plan, moved = _plan(_broadcast_linalg(4096), machine)
    assert sum(moved) > STREAMING_SERIAL_BYTES
    assert big_plan.params[:2] != (4096, 1024)


@pytest.mark.parametrize("machine", [Machine(2, 64), Machine(16, 32)])
def test_an_8_mib_broadcast_with_its_input_is_one_chunk(machine):
    # 8 MiB written and the 8 KiB vector read (as a c128 column broadcast of a
    # 512-vector moves): over 8 MiB in all, still on the calling thread
    plan, moved = _plan(_broadcast_linalg(2048), machine)
    assert sum(moved) == 8 * 2**20 + 2048 * 4
    assert plan.params[:2] == (2048, 1024)


def test_the_rule_counts_bytes_and_math():
    assert streams_alone(0, STREAMING_SERIAL_BYTES, math_heavy=False)
    assert not streams_alone(0, STREAMING_SERIAL_BYTES + 1, math_heavy=False)
    assert not streams_alone(0, 1 << 20, math_heavy=True)


def test_kernels_that_read_as_much_as_they_write_stay_split():
    # measured on an idle Zen 4: an add or a relu of 0.5-2 MiB gains from the second core
    assert not streams_alone(1 << 20, 1 << 20, math_heavy=False)
    assert streams_alone(1 << 18, 1 << 20, math_heavy=False)     # a quarter: write-mostly
    assert not streams_alone((1 << 18) + 1, 1 << 20, math_heavy=False)


_BROADCAST = """func.func @main(%v: tensor<{rows}xf32>) -> tensor<{rows}x1024xf32> {{
  %r = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<{rows}xf32>) -> tensor<{rows}x1024xf32>
  return %r : tensor<{rows}x1024xf32>
}}"""


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_a_small_broadcast_compiles_without_a_parallel_region(cpu):
    exe = xlac.compile(_BROADCAST.format(rows=512), cpu=cpu, cache=False, options=TWO_THREADS)
    assert "omp.parallel" not in exe.as_text("llvm")
    if runnable_levels(cpu):
        v = np.arange(512, dtype=np.float32)
        np.testing.assert_array_equal(exe(v), np.broadcast_to(v[:, None], (512, 1024)))


def test_an_init_the_body_reads_counts_twice():
    in_place = _broadcast_linalg(512, "%s = arith.addf %in, %out : f32\n    linalg.yield %s : f32")
    _, moved = _plan(in_place, Machine(2, 64))
    assert moved == (512 * 4 + 512 * 1024 * 4, 512 * 1024 * 4)   # the output read and written


_PERMUTED_ADD = _broadcast_linalg(512, "%s = arith.addf %in, %out : f32\n    linalg.yield %s : f32",
                                  read="(d1, d0)", input_type="tensor<1024x512xf32>")


def test_a_permuted_read_is_no_stream():
    from xlac.context import new_context
    from xlac.mlir import ir
    from xlac.passes.cpu import apply_schedules
    from xlac.passes.cpu.plans.schedule_plan import reads_in_order

    with new_context():
        [op] = [op for op in apply_schedules._linalg_ops(ir.Module.parse(_PERMUTED_ADD).operation)
                if op.name == "linalg.generic"]
        assert not reads_in_order(op)
        [broadcast] = [op for op in apply_schedules._linalg_ops(ir.Module.parse(_broadcast_linalg(512)).operation)
                       if op.name == "linalg.generic"]
        assert reads_in_order(broadcast)
