"""The matmul register tile per CPU level: every register AVX2 has, even when
the rows do not divide m (the last tile is peeled and masked)."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.passes.cpu.contraction_plan import register_tile
from xlac.passes.cpu.schedule_plan import Machine

AVX2, AVX512 = Machine(2, 32), Machine(2, 64)


@pytest.mark.parametrize("m, n, machine, tile", [
    (1024, 1024, AVX2, (6, 16)),       # 6 rows peeled, not 4 that divide (25.7 -> 36.6 GFLOP/s, 1 core)
    (128, 128, AVX2, (4, 16)),         # a short matrix keeps the divisor: no masked tile
    (197, 64, AVX2, (6, 16)),          # no divisor worth having
    (1024, 1024, AVX512, (8, 32)),
])
def test_register_tile(m, n, machine, tile):
    assert register_tile(m, n, machine) == tile


def test_tall_matmul_with_peeled_rows_is_right():
    m, k, n = 200, 64, 48                       # 200 = 33 x 6 + 2 on AVX2
    text = (f"func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            f"(tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>\n"
            f"  return %0 : tensor<{m}x{n}xf32>\n}}")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    for cpu in ("x86-64-v3", "host"):
        np.testing.assert_allclose(xlac.compile(text, cpu=cpu)(a, b), a @ b, rtol=2e-5, atol=2e-4)
