"""f64 matmuls: the AVX-512 plan's row chunks (two a thread where B is beyond
L2: each row chunk packs all of B again), and results at every named level."""

from __future__ import annotations

import numpy as np
import pytest
from plan_programs import matmul_plan
from test_register_tiles import AVX2, AVX512

import xlac
from conftest import runnable_levels
from xlac.passes.cpu.plans.schedule_plan import Machine
from xlac.reference.interpreter import run_reference


def _dot(m: int, k: int, n: int, element: str = "f64") -> str:
    return (f"func.func @main(%a: tensor<{m}x{k}x{element}>, %b: tensor<{k}x{n}x{element}>) "
            f"-> tensor<{m}x{n}x{element}> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            f"(tensor<{m}x{k}x{element}>, tensor<{k}x{n}x{element}>) -> tensor<{m}x{n}x{element}>\n"
            f"  return %0 : tensor<{m}x{n}x{element}>\n}}")


@pytest.mark.parametrize("m, k, n, element, machine, chunk_rows", [
    (512, 2048, 512, "f64", AVX512, 128),   # B 8 MiB: two chunks a thread (512^3, 2 MiB: 2.3 -> 2.1 ms;
                                            # now chunks of columns, test_short_row_chunks_as_columns.py)
    (512, 512, 512, "f64", Machine(8, 64), 32),
    (512, 256, 128, "f64", AVX512, 64),     # B 256 KiB, in L2: four chunks a thread (short k)
    (512, 2048, 512, "f32", AVX512, 64),    # f32 keeps its chunks
])
def test_avx512_f64_row_chunks(m, k, n, element, machine, chunk_rows):
    plan = matmul_plan(m, k, n, machine, element=element)
    assert plan.sequence.startswith("xla_matmul") and plan.params[:2] == (chunk_rows, 0)


def test_avx2_f64_plan_is_unchanged():
    plan = matmul_plan(512, 512, 512, AVX2, element="f64")
    assert plan.sequence == "xla_matmul_block_packed" and plan.params == (0, 64, 64, 256, 6, 8)


def _sum_in_k_order(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    total = np.zeros((a.shape[0], b.shape[1]), a.dtype)
    for i in range(a.shape[1]):
        total += np.outer(a[:, i], b[i])
    return total


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3", "x86-64-v4", "host"])
def test_f64_matmul_is_right_on_every_level(cpu):
    """256 x 512 x 512 (B 2 MiB: the taller chunks at AVX-512) against numpy;
    at x86-64-v2 (no FMA) the sums in k order from 0, bit for bit. A level
    this host cannot run is compiled only."""
    m, k, n = 256, 512, 512
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    exe = xlac.compile(_dot(m, k, n), cpu=cpu, cache=False)
    assert "scalar loops" not in exe.fusion_report()
    if cpu not in runnable_levels(cpu):
        return
    if cpu == "x86-64-v2":
        np.testing.assert_array_equal(exe(a, b), _sum_in_k_order(a, b))
    else:
        np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-12, atol=1e-11)


def test_small_f64_matmul_matches_the_interpreter():
    """A small f64 dot against the StableHLO reference interpreter, at
    x86-64-v4 where this host runs it, else at x86-64-v3."""
    text = _dot(16, 24, 32)
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((16, 24)), rng.standard_normal((24, 32))
    [want] = run_reference(text.encode(), [a, b])
    cpu = runnable_levels("x86-64-v4", "x86-64-v3")[0]
    np.testing.assert_allclose(xlac.compile(text, cpu=cpu, cache=False)(a, b), want, rtol=1e-13, atol=1e-13)
