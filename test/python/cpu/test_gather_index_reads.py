"""A column gather's indices (jnp's `t[:, i]`: 256x1) read as one vector
(xla-collapse-unit-read-dims), their out-of-range values still clamped:
numpy's values bit for bit for f16, i32 and f64 tables."""

from __future__ import annotations

import numpy as np
import pytest

import xlac


def _gather(t: str) -> str:
    dims = ("#stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], "
            "index_vector_dim = 1>")
    return (f'  %{t} = "stablehlo.gather"(%{t}t, %i) <{{dimension_numbers = {dims}, '
            f"indices_are_sorted = false, slice_sizes = array<i64: 40, 1>}}> : "
            f"(tensor<40x300x{t}>, tensor<37x1xi32>) -> tensor<40x37x{t}>")


PROGRAM = ("func.func @main(%f16t: tensor<40x300xf16>, %i32t: tensor<40x300xi32>, "
           "%f64t: tensor<40x300xf64>, %i: tensor<37x1xi32>)\n"
           "    -> (tensor<40x37xf16>, tensor<40x37xi32>, tensor<40x37xf64>) {\n"
           + "\n".join(_gather(t) for t in ("f16", "i32", "f64"))
           + "\n  return %f16, %i32, %f64 : tensor<40x37xf16>, tensor<40x37xi32>, tensor<40x37xf64>\n}")


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3"])
def test_column_gathers_match_numpy(cpu):
    rng = np.random.default_rng(2)
    tables = [rng.standard_normal((40, 300)).astype(np.float16),
              rng.integers(-1000, 1000, (40, 300)).astype(np.int32),
              rng.standard_normal((40, 300))]
    indices = rng.integers(-20, 320, (37, 1)).astype(np.int32)     # some out of range: clamped
    got = xlac.compile(PROGRAM, cache=False, cpu=cpu)(*tables, indices)
    at = np.clip(indices[:, 0], 0, 299)
    for g, t in zip(got, tables):
        assert g.dtype == t.dtype and np.array_equal(g.view(np.uint8), np.ascontiguousarray(t[:, at]).view(np.uint8))
