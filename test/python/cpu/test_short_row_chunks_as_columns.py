"""The sweep's dot_general cases (bench/sweep_cases.py: 512^3, A row-major or
transposed, x.T @ y): which plan each gets per level. At AVX-512 the row
chunks of 512^3 (64 rows f32, 128 f64) were too short for B's whole-k block,
and each packed all of B's panels again; now chunks of all rows and whole
columns pack each block once (whole_k_blocks.all_rows_column_chunks).
AVX2's plan does not change. A transposed A is transposed apart in either case."""

from __future__ import annotations

import numpy as np
import pytest
from plan_programs import matmul_plan

import xlac
from conftest import runnable_levels
from xlac.context import new_context
from xlac.mlir import ir
from xlac.passes.cpu import apply_schedules
from xlac.passes.cpu.plans.schedule_plan import Machine

# the Machine each level's pipeline plans for on two threads (a named level: L1 not known)
LEVELS = {"x86-64-v3": Machine(2, 32), "x86-64-v4": Machine(2, 64)}
ZEN4 = Machine(2, 64, 32 << 10)     # the host level on a Zen 4: a 32 KiB L1
XEON = Machine(2, 64, 48 << 10)


def _sweep_dot(element: str, transposed: bool) -> str:
    """The linalg form of the sweep's program: a transposed A is a linalg.transpose of its own."""
    t = f"tensor<512x512x{element}>"
    a = "%t" if transposed else "%a"
    transpose = (f"  %t = linalg.transpose ins(%a : {t}) outs(%e : {t}) permutation = [1, 0]\n"
                 if transposed else "")
    return (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %z = arith.constant 0.0 : {element}\n  %e = tensor.empty() : {t}\n"
            f"  %f = linalg.fill ins(%z : {element}) outs(%e : {t}) -> {t}\n" + transpose +
            f"  %r = linalg.matmul ins({a}, %b : {t}, {t}) outs(%f : {t}) -> {t}\n"
            f"  return %r : {t}\n}}")


def _plans(text: str, machine: Machine) -> dict[str, tuple[str, tuple[int, ...]]]:
    with new_context():
        module = ir.Module.parse(text)
        planned = apply_schedules._plans(apply_schedules._linalg_ops(module.operation), machine)
        return {op.name: (plan.sequence, plan.params) for op, plan in planned}


@pytest.mark.parametrize("level, element, plan", [
    ("x86-64-v3", "f32", ("xla_matmul_block_packed_zero_start", (0, 64, 64, 512, 6, 16))),  # from zeros
    ("x86-64-v3", "f64", ("xla_matmul_block_packed", (0, 64, 64, 256, 6, 8))),      # unchanged
    # before: ("xla_matmul", (64, 0, 0, 256, 256, 8, 32)), B packed eight times
    ("x86-64-v4", "f32", ("xla_matmul_block_packed", (0, 128, 128, 512, 8, 32))),
    # before: ("xla_matmul", (128, 0, 0, 256, 256, 8, 16)), B packed four times
    ("x86-64-v4", "f64", ("xla_matmul_block_packed", (0, 64, 64, 512, 8, 16))),
])
@pytest.mark.parametrize("transposed", [False, True])
def test_sweep_dot_plans(level, element, plan, transposed):
    plans = _plans(_sweep_dot(element, transposed), LEVELS[level])
    assert plans["linalg.matmul"] == plan
    assert ("linalg.transpose" in plans) == transposed      # A transposed apart, the matmul's plan the same


@pytest.mark.parametrize("machine", [ZEN4, XEON], ids=["zen4", "xeon"])
def test_known_l1_takes_the_columns_too(machine):
    """512 rows are enough row tiles for the whole-k block with either L1
    (16 tiles of 8 rows with 32 KiB, 32 with 48 KiB)."""
    assert matmul_plan(512, 512, 512, machine).params == (0, 128, 128, 512, 8, 32)


@pytest.mark.parametrize("m, k, n, machine, sequence, params", [
    # too few rows for the whole-k block on a 48 KiB L1 (32 tiles of 8): the panels stay
    (128, 512, 128, XEON, "xla_matmul", (16, 0, 0, 128, 256, 8, 32)),
    # k beyond WHOLE_K: no whole-k block
    (512, 2048, 512, LEVELS["x86-64-v4"], "xla_matmul", (64, 0, 0, 256, 256, 8, 32)),
    # blocks narrower than MIN_WHOLE_K_TILES tiles (768 x 4 B x 64 columns <= 256 KiB): the panels stay
    (768, 768, 768, ZEN4, "xla_matmul", (96, 0, 0, 256, 256, 8, 32)),
    # too few columns for two chunks a thread of four tiles each
    (512, 512, 256, ZEN4, "xla_matmul", (64, 0, 0, 256, 256, 8, 32)),
])
def test_other_shapes_keep_their_plan(m, k, n, machine, sequence, params):
    plan = matmul_plan(m, k, n, machine)
    assert (plan.sequence, plan.params) == (sequence, params)


def _dot(element: str) -> str:
    t = f"tensor<512x512x{element}>"
    return (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : ({t}, {t}) -> {t}\n"
            f"  return %0 : {t}\n}}")


@pytest.mark.heavy
@pytest.mark.parametrize("element", ["f32", "f64"])
def test_column_chunks_sum_as_one_core(element):
    """x86-64-v4, x.T @ y at 512^3: two threads (the new chunks) equal one
    thread's one chunk bit for bit, and numpy within the tolerance."""
    if runnable_levels("x86-64-v4") != ["x86-64-v4"]:
        pytest.skip("x86-64-v4 code runs only where the host has AVX-512")
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((512, 512)).astype(element.replace("f", "float")) for _ in range(2))
    one, two = (xlac.compile(_dot(element), cpu="x86-64-v4", cache=False,
                             options=xlac.Options.from_env().replace(num_threads=threads))(a, b)
                for threads in (1, 2))
    np.testing.assert_array_equal(two, one)
    np.testing.assert_allclose(two, a.T @ b, rtol=1e-4 if element == "f32" else 1e-10, atol=1e-3)
