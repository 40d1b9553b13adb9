"""stablehlo.scatter through xlac.compile, checked against a numpy model of the spec.

The model follows StableHLO's scatter semantics with XLA's out-of-bounds rule:
a window whose start index does not fit in the operand is skipped whole.
"""

import numpy as np
import pytest

import xlac

_ADD = "stablehlo.add"
_COMBINE = {
    "stablehlo.add": np.add, "stablehlo.multiply": np.multiply,
    "stablehlo.maximum": np.maximum, "stablehlo.minimum": np.minimum,
}


def _dims_attr(dims: dict) -> str:
    parts = [f"{key} = [{', '.join(map(str, value))}]" for key, value in dims.items()
             if key != "index_vector_dim" and value]
    parts.append(f"index_vector_dim = {dims['index_vector_dim']}")
    return "#stablehlo.scatter<" + ", ".join(parts) + ">"


def _program(operands: list[str], indices: str, updates: list[str], dims: dict,
             body: str, block_types: list[str]) -> str:
    """A @main(operands..., indices, updates...) returning the scatter's results."""
    n = len(operands)
    args = ([f"%in{i}: {t}" for i, t in enumerate(operands)] + [f"%idx: {indices}"]
            + [f"%up{i}: {t}" for i, t in enumerate(updates)])
    block = ", ".join(f"%x{i}: {t}" for i, t in enumerate(block_types[:n])) + ", " + \
        ", ".join(f"%y{i}: {t}" for i, t in enumerate(block_types[n:]))
    operand_names = [f"%in{i}" for i in range(n)] + ["%idx"] + [f"%up{i}" for i in range(n)]
    signature = f"({', '.join(operands + [indices] + updates)}) -> ({', '.join(operands)})"
    results = ", ".join(f"%r#{i}" for i in range(n))
    return f"""
func.func @main({', '.join(args)}) -> ({', '.join(operands)}) {{
  %r:{n} = "stablehlo.scatter"({', '.join(operand_names)}) ({{
  ^bb0({block}):
{body}
  }}) {{scatter_dimension_numbers = {_dims_attr(dims)}}} : {signature}
  return {results} : {', '.join(operands)}
}}"""


def _binary_body(op: str, element: str) -> str:
    t = f"tensor<{element}>"
    if op == "replace":
        return f"    stablehlo.return %y0 : {t}"
    return f"    %z = {op} %x0, %y0 : {t}\n    stablehlo.return %z : {t}"


def _type(array: np.ndarray, element: str) -> str:
    return "tensor<" + "".join(f"{n}x" for n in array.shape) + element + ">"


def reference_scatter(operands, indices, updates, dims, combine):
    """Apply updates one scatter index at a time, as XLA does."""
    results = [np.array(o, copy=True) for o in operands]
    shape, rank = results[0].shape, results[0].ndim
    window_dims, ivd = dims["update_window_dims"], dims["index_vector_dim"]
    dropped = set(dims["inserted_window_dims"]) | set(dims["input_batching_dims"])
    operand_window_dims = [d for d in range(rank) if d not in dropped]
    sizes = {d: updates[0].shape[w] for d, w in zip(operand_window_dims, window_dims)}
    scatter_dims = [d for d in range(updates[0].ndim) if d not in window_dims]
    for where in np.ndindex(*[updates[0].shape[d] for d in scatter_dims]):
        position = list(where)
        if ivd < indices.ndim:
            position.insert(ivd, slice(None))
        vector = np.atleast_1d(indices[tuple(position)]).astype(np.int64)
        start = [0] * rank
        for k, d in enumerate(dims["scatter_dims_to_operand_dims"]):
            start[d] = int(vector[k])
        if any(not 0 <= start[d] <= shape[d] - sizes.get(d, 1)
               for d in dims["scatter_dims_to_operand_dims"]):
            continue
        for d, b in zip(dims["input_batching_dims"], dims["scatter_indices_batching_dims"]):
            start[d] = where[b - (b > ivd)]
        for offset in np.ndindex(*[updates[0].shape[w] for w in window_dims]):
            at = list(start)
            for k, d in enumerate(operand_window_dims):
                at[d] += offset[k]
            update_at = [0] * updates[0].ndim
            for k, d in enumerate(scatter_dims):
                update_at[d] = where[k]
            for k, d in enumerate(window_dims):
                update_at[d] = offset[k]
            new = combine([r[tuple(at)] for r in results], [u[tuple(update_at)] for u in updates])
            for r, value in zip(results, new):
                r[tuple(at)] = value
    return results


def _dims(**given) -> dict:
    dims = {"update_window_dims": [], "inserted_window_dims": [], "input_batching_dims": [],
            "scatter_indices_batching_dims": [], "scatter_dims_to_operand_dims": [],
            "index_vector_dim": 0}
    dims.update(given)
    return dims


def _run_binary(op, operand, indices, updates, dims, element, index_element):
    text = _program([_type(operand, element)], _type(indices, index_element),
                    [_type(updates, element)], dims, _binary_body(op, element),
                    [f"tensor<{element}>"] * 2)
    (want,) = reference_scatter([operand], indices, [updates], dims,
                                lambda xs, ys: [_COMBINE.get(op, lambda x, y: y)(xs[0], ys[0])])
    (got,) = xlac.compile(text).run(operand.copy(), indices, updates)
    return got, want


def test_repeated_and_out_of_bounds_scalar_indices():
    operand = np.arange(8, dtype=np.int32)
    indices = np.array([3, 3, 0, 7, 8, -1, 3, 5], dtype=np.int32)
    updates = np.arange(1, 9, dtype=np.int32) * 10
    dims = _dims(inserted_window_dims=[0], scatter_dims_to_operand_dims=[0], index_vector_dim=1)
    got, want = _run_binary(_ADD, operand, indices, updates, dims, "i32", "i32")
    np.testing.assert_array_equal(got, want)
    assert got[3] == 3 + 10 + 20 + 70


@pytest.mark.parametrize("op", sorted(_COMBINE) + ["replace"])
def test_windows_with_unsigned_index_vectors(op):
    rng = np.random.default_rng(0)
    operand = rng.standard_normal((3, 4, 2)).astype(np.float32)
    indices = np.array([[[0, 2], [1, 0], [2, 1]], [[0, 1], [1, 0], [0, 9]]], dtype=np.uint32)
    updates = rng.standard_normal((2, 3, 2, 2)).astype(np.float32)
    dims = _dims(update_window_dims=[2, 3], inserted_window_dims=[0],
                 scatter_dims_to_operand_dims=[1, 0], index_vector_dim=2)
    got, want = _run_binary(op, operand, indices, updates, dims, "f32", "ui32")
    np.testing.assert_array_equal(got, want)


def test_window_that_overhangs_is_skipped_whole():
    operand = np.zeros((5, 4), dtype=np.float64)
    indices = np.array([[1], [3], [4]], dtype=np.int64)      # rows 3..4 fit, 4..5 does not
    updates = np.ones((3, 2, 4), dtype=np.float64)
    dims = _dims(update_window_dims=[1, 2], scatter_dims_to_operand_dims=[0], index_vector_dim=1)
    got, want = _run_binary(_ADD, operand, indices, updates, dims, "f64", "i64")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got.sum(axis=1), [0, 4, 4, 4, 4])  # not 8 in row 4


def test_batching_dims():
    rng = np.random.default_rng(2)
    operand = rng.integers(-50, 50, size=(2, 6, 3)).astype(np.int64)
    indices = rng.integers(0, 6, size=(2, 4, 1)).astype(np.int8)
    updates = rng.integers(-50, 50, size=(2, 4, 3)).astype(np.int64)
    dims = _dims(update_window_dims=[2], inserted_window_dims=[1], input_batching_dims=[0],
                 scatter_indices_batching_dims=[0], scatter_dims_to_operand_dims=[1],
                 index_vector_dim=2)
    got, want = _run_binary("stablehlo.multiply", operand, indices, updates, dims, "i64", "i8")
    np.testing.assert_array_equal(got, want)


def test_two_operands_share_one_index():
    """A pair scatter: keep the larger key and the value that came with it."""
    keys = np.array([5, 1, 7, 2], dtype=np.float32)
    values = np.array([0, 1, 2, 3], dtype=np.int32)
    indices = np.array([[1], [1], [3], [0], [2]], dtype=np.int32)
    new_keys = np.array([4, 9, 2, 6, 7], dtype=np.float32)
    new_values = np.array([10, 11, 12, 13, 14], dtype=np.int32)
    body = """    %gt = stablehlo.compare GT, %y0, %x0 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %k = stablehlo.select %gt, %y0, %x0 : tensor<i1>, tensor<f32>
    %v = stablehlo.select %gt, %y1, %x1 : tensor<i1>, tensor<i32>
    stablehlo.return %k, %v : tensor<f32>, tensor<i32>"""
    dims = _dims(inserted_window_dims=[0], scatter_dims_to_operand_dims=[0], index_vector_dim=1)
    text = _program(["tensor<4xf32>", "tensor<4xi32>"], "tensor<5x1xi32>",
                    ["tensor<5xf32>", "tensor<5xi32>"], dims, body,
                    ["tensor<f32>", "tensor<i32>"] * 2)
    want = reference_scatter([keys, values], indices, [new_keys, new_values], dims,
                             lambda xs, ys: list(ys) if ys[0] > xs[0] else list(xs))
    got = xlac.compile(text).run(keys, values, indices, new_keys, new_values)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_control_flow_in_the_update_runs_per_element():
    body = """    %p = stablehlo.compare GT, %x0, %y0 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %z = "stablehlo.if"(%p) ({
      %s = stablehlo.subtract %x0, %y0 : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }, {
      %s = stablehlo.add %x0, %y0 : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    stablehlo.return %z : tensor<f32>"""
    operand = np.arange(15, dtype=np.float32).reshape(5, 3)
    indices = np.array([[1], [4], [1], [7]], dtype=np.int32)
    updates = np.full((4, 3), 2, dtype=np.float32)
    dims = _dims(update_window_dims=[1], inserted_window_dims=[0],
                 scatter_dims_to_operand_dims=[0], index_vector_dim=1)
    text = _program(["tensor<5x3xf32>"], "tensor<4x1xi32>", ["tensor<4x3xf32>"], dims, body,
                    ["tensor<f32>"] * 2)
    (want,) = reference_scatter([operand], indices, [updates], dims,
                                lambda xs, ys: [xs[0] - ys[0] if xs[0] > ys[0] else xs[0] + ys[0]])
    (got,) = xlac.compile(text).run(operand, indices, updates)
    np.testing.assert_array_equal(got, want)


def test_inputs_are_not_modified():
    operand = np.zeros(4, dtype=np.float32)
    dims = _dims(inserted_window_dims=[0], scatter_dims_to_operand_dims=[0], index_vector_dim=1)
    text = _program(["tensor<4xf32>"], "tensor<1xi32>", ["tensor<1xf32>"], dims,
                    _binary_body(_ADD, "f32"), ["tensor<f32>"] * 2)
    xlac.compile(text).run(operand, np.array([1], np.int32), np.ones(1, np.float32))
    np.testing.assert_array_equal(operand, np.zeros(4, dtype=np.float32))


@pytest.mark.parametrize("start", [2, 4, -1])
def test_one_index_vector_without_scatter_loops(start):
    operand = np.arange(15, dtype=np.int16).reshape(5, 3)
    indices = np.array([start, 1], dtype=np.int32)
    updates = np.full((2, 2), 7, dtype=np.int16)
    dims = _dims(update_window_dims=[0, 1], scatter_dims_to_operand_dims=[0, 1],
                 index_vector_dim=0)
    got, want = _run_binary("stablehlo.maximum", operand, indices, updates, dims, "i16", "i32")
    np.testing.assert_array_equal(got, want)


def test_no_updates_leaves_the_operand():
    operand = np.arange(6, dtype=np.float32).reshape(2, 3)
    indices = np.zeros((0, 1), dtype=np.int32)
    updates = np.zeros((0, 3), dtype=np.float32)
    dims = _dims(update_window_dims=[1], inserted_window_dims=[0],
                 scatter_dims_to_operand_dims=[0], index_vector_dim=1)
    got, want = _run_binary(_ADD, operand, indices, updates, dims, "f32", "i32")
    np.testing.assert_array_equal(got, operand)
