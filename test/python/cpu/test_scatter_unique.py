"""Row scatters with `unique_indices` (`x.at[perm].set(u, unique_indices=True)`),
against the reference interpreter.

With unique ids no two updates share a row: xlac runs chunks of the updates in
parallel (an scf.forall), each writing its rows in place. Without the flag (or
with sorted ids, which have their own path) the forall of unique ids is not
used. Out-of-bounds ids, negative or past the end, are skipped as StableHLO
says (the update is dropped, not clamped). Duplicate ids under the flag are
undefined behaviour: any result, but no crash and no write to another row.
"""

import numpy as np
import pytest

import xlac
from xlac.reference.server import shared_server

_ROWS, _WIDTH = 3000, 64          # 64-wide rows: 1,024 per parallel chunk

_SCATTER = """func.func @main(%x: tensor<{rows}x{width}xf32>, %i: tensor<{n}x1xi32>,
                 %u: tensor<{n}x{width}xf32>) -> tensor<{rows}x{width}xf32> {{
  %r = "stablehlo.scatter"(%x, %i, %u) ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    {combine}
    stablehlo.return %s : tensor<f32>
  }}) {{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
        inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>{flags}}}
     : (tensor<{rows}x{width}xf32>, tensor<{n}x1xi32>, tensor<{n}x{width}xf32>) -> tensor<{rows}x{width}xf32>
  return %r : tensor<{rows}x{width}xf32>
}}
"""

_COMBINE = {"set": "%s = stablehlo.add %b, %b : tensor<f32>",      # set twice the update: not a copy
            "add": "%s = stablehlo.add %a, %b : tensor<f32>"}


def _program(n: int, combine: str, flags: str) -> str:
    return _SCATTER.format(rows=_ROWS, width=_WIDTH, n=n, combine=_COMBINE[combine],
                           flags=flags and f", {flags}")


def _inputs(n: int, rng, out_of_bounds: bool = True) -> list[np.ndarray]:
    """``n`` distinct ids in a random order; a few out of bounds at both ends."""
    ids = rng.permutation(_ROWS)[:n].astype(np.int32)
    if out_of_bounds:
        ids[:4] = [-1, -_ROWS, _ROWS, _ROWS + 7]
    ids = rng.permutation(ids)
    x = rng.standard_normal((_ROWS, _WIDTH)).astype(np.float32)
    u = rng.standard_normal((n, _WIDTH)).astype(np.float32)
    return [x, ids.reshape(n, 1), u]


def _parallel(exe) -> bool:
    return "scf.forall" in exe.as_text("linalg")


@pytest.mark.parametrize("combine", ["set", "add"])
@pytest.mark.parametrize("n", [1, 9, 2500])
def test_unique_ids_in_parallel_chunks(combine, n):
    """2,500 updates make three chunks; the skipped ids write nothing."""
    text = _program(n, combine, "unique_indices = true")
    inputs = _inputs(n, np.random.default_rng(n), out_of_bounds=n > 4)
    exe = xlac.compile(text, cpu="x86-64-v3", cache=False)
    assert _parallel(exe) == (n > 1024)          # one chunk runs as a plain loop
    (want,) = shared_server().run(text.encode(), inputs)
    np.testing.assert_array_equal(np.asarray(exe(*inputs)), want)


@pytest.mark.parametrize("flags", ["", "unique_indices = false",
                                   "indices_are_sorted = true, unique_indices = true"])
def test_the_unique_path_only_for_unsorted_unique_ids(flags):
    """Not unique: the one-at-a-time loop; sorted too: the sorted chunks (their while loop)."""
    exe = xlac.compile(_program(2500, "add", flags), cpu="x86-64-v3", cache=False)
    linalg = exe.as_text("linalg")
    assert ("scf.forall" in linalg) == ("true" in flags)
    assert ("scf.while" in linalg) == ("indices_are_sorted" in flags)


def test_duplicate_ids_under_the_flag_do_not_crash():
    """Undefined behaviour: each row hit gets some mix of its updates; rows no id
    names are untouched."""
    rng = np.random.default_rng(5)
    x, _, u = _inputs(2500, rng)
    ids = rng.integers(0, 40, (2500, 1)).astype(np.int32)
    exe = xlac.compile(_program(2500, "set", "unique_indices = true"), cpu="x86-64-v3", cache=False)
    got = np.asarray(exe(x, ids, u))
    np.testing.assert_array_equal(got[40:], x[40:])
