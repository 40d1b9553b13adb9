"""Transposes whose input and output walk different dims contiguously, and
elementwise ops reading an operand so, move square blocks through registers
(passes/cpu/schedules/transpose.mlir) in every element width, not a vector's
elements gathered one by one; every permutation and width stays exact."""

from __future__ import annotations

import re

import ml_dtypes
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

# a block transposed in registers: rounds of two-row unpacks (16x16), or one
# shuffle of the flattened block (8x8)
_IN_REGISTERS = r"vector\.shuffle %\S+, %\S+ \[0, (8|16), "

# (shape, permutation, the plan's sequence)
CASES = [
    ((4, 128, 4, 64), (0, 2, 3, 1), "xla_transpose_blocks_4d"),   # attention's K as [b, h, d, s]
    ((4, 4, 64, 128), (0, 3, 1, 2), "xla_transpose_blocks_4d"),   # its output back to [b, s, h, d]
    ((64, 32, 48), (2, 0, 1), "xla_transpose_blocks_3d"),
    ((8, 96, 64), (0, 2, 1), "xla_transpose_blocks_3d"),           # the innermost two swapped
    ((96, 64), (1, 0), "xla_transpose_blocks_2d"),
    ((256, 1024), (1, 0), "xla_transpose_rows_2d"),                # input rows 4 KiB apart
    ((64, 2048), (1, 0), "xla_transpose_rows_2d"),
    ((512, 1024), (1, 0), "xla_transpose_blocks_2d"),              # output rows 2 KiB apart too
    ((8, 197, 3, 64), (0, 2, 3, 1), "xla_transpose_peeled_4d"),    # 197: a masked last block
    ((180, 2048), (1, 0), "xla_transpose_peeled_2d"),              # 180: rows 8 KiB apart
    ((1024, 180), (1, 0), "xla_transpose_peeled_2d"),
    ((20, 3, 37), (2, 1, 0), "xla_transpose_peeled_3d"),           # both swapped dims ragged
    ((3, 1000, 7), (1, 2, 0), "xla_elementwise_3d"),               # 3, 7: narrower than a block
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
    if "blocks" in sequence or "peeled" in sequence:
        assert re.search(_IN_REGISTERS, exe.as_text("bufferized"))
    if cpu in runnable_levels(cpu):
        x = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
        np.testing.assert_array_equal(exe(x), x.transpose(permutation))


# element type: (its StableHLO name, numpy dtype); one of each width
WIDTHS = {"i1": ("i1", np.bool_), "i8": ("i8", np.int8), "bf16": ("bf16", ml_dtypes.bfloat16),
          "f16": ("f16", np.float16), "i32": ("i32", np.int32), "f64": ("f64", np.float64),
          "i64": ("i64", np.int64)}


def _values(shape, dtype, rng):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "i":
        return rng.integers(-100, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _transposed_sum(shape, element) -> str:
    """x.T + y (or, for booleans, x.T | y): the transpose fused into the add's loops."""
    t, o = f"tensor<{shape[0]}x{shape[1]}x{element}>", f"tensor<{shape[1]}x{shape[0]}x{element}>"
    op = "stablehlo.or" if element == "i1" else "stablehlo.add"
    return (f"func.func @main(%x: {t}, %y: {o}) -> {o} {{\n"
            f"  %t = stablehlo.transpose %x, dims = [1, 0] : ({t}) -> {o}\n"
            f"  %0 = {op} %t, %y : {o}\n  return %0 : {o}\n}}\n")


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3", "x86-64-v4", "host"])
@pytest.mark.parametrize("element", sorted(WIDTHS))
def test_every_width_moves_blocks_exactly(cpu, element):
    name, dtype = WIDTHS[element]
    rng = np.random.default_rng(1)
    shape, permutation = (4, 64, 96), (0, 2, 1)
    transpose = xlac.compile(_program(shape, permutation).replace("xf32>", f"x{name}>"), cpu=cpu,
                             cache=False)
    added = xlac.compile(_transposed_sum((64, 96), name), cpu=cpu, cache=False)
    for exe in (transpose, added):
        assert re.search(_IN_REGISTERS, exe.as_text("bufferized"))
        assert "vector.gather" not in exe.as_text("bufferized")
    if cpu in runnable_levels(cpu):
        x, a, b = _values(shape, dtype, rng), _values((64, 96), dtype, rng), _values((96, 64), dtype, rng)
        expected = (a.T | b) if dtype == np.bool_ else (a.T + b)
        np.testing.assert_array_equal(transpose(x), x.transpose(permutation))
        np.testing.assert_array_equal(added(a, b), expected)


# FFT pairs to planes and back, (B, N, 2) <-> (N, 2, B): xla-collapse-reduction-loops
# merges the pair dim into its neighbour, a 2-D transpose of ragged 16 x 16 blocks
@pytest.mark.parametrize("cpu", ["x86-64-v3", "host"])
@pytest.mark.parametrize(("shape", "permutation"), [((180, 2048, 2), (1, 2, 0)), ((2048, 2, 180), (2, 0, 1)),
                                                    ((36, 100, 2), (1, 2, 0))])
def test_pair_transposes_in_blocks(cpu, shape, permutation):
    exe = xlac.compile(_program(shape, permutation), cpu=cpu, cache=False)
    assert re.search(_IN_REGISTERS, exe.as_text("bufferized"))
    if cpu in runnable_levels(cpu):
        x = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
        np.testing.assert_array_equal(exe(x), x.transpose(permutation))


# Whole blocks in chunks that divide the rows: 1440 = 90 blocks in 5 chunks of 288
# (thread_tiles' 368 left every block masked: twice the time), 1040 = 65 in 5 of 208
# (not 272); 97 x 97 blocks divide no nearer than 97: thread_tiles' masked chunks.
@pytest.mark.parametrize(("shape", "chunks", "masked"), [((192, 1440), (288, 0), False),
                                                         ((272, 1040), (208, 0), False),
                                                         ((1552, 1552), (208, 0), True)])
def test_whole_block_chunks_divide(shape, chunks, masked):
    with new_context():
        module = ir.Module.parse(_program(shape, (1, 0)))
        run_passes(module, pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg())
        [op] = [op for op in apply_schedules._linalg_ops(module.operation)
                if op.name in ("linalg.transpose", "linalg.generic")]
        plan = plan_for(op, Machine(2, 64))
    assert plan.sequence == "xla_transpose_blocks_2d" and plan.params[:2] == chunks
    for cpu in runnable_levels("x86-64-v3", "host"):
        exe = xlac.compile(_program(shape, (1, 0)), cpu=cpu, cache=False)
        assert ("vector.create_mask" in exe.as_text("bufferized")) == masked
        x = np.random.default_rng(2).standard_normal(shape, dtype=np.float32)
        np.testing.assert_array_equal(exe(x), x.T)
