"""stablehlo.sort and chlo.top_k through xlac.compile, checked against numpy."""

import numpy as np
import pytest

import xlac


def _sort_program(shapes_types: list[str], dimension: int, comparator: str,
                  stable: bool = True) -> str:
    """A @main that sorts its arguments with ``comparator`` on the first pair."""
    args = ", ".join(f"%x{k}: {t}" for k, t in enumerate(shapes_types))
    elems = [t[t.rindex("x") + 1:-1] for t in shapes_types]
    block = ", ".join(f"%l{k}: tensor<{e}>, %r{k}: tensor<{e}>" for k, e in enumerate(elems))
    types = ", ".join(shapes_types)
    count = len(shapes_types)
    results = ", ".join(f"%s#{k}" for k in range(count))
    return f"""
func.func @main({args}) -> ({types}) {{
  %s:{count} = "stablehlo.sort"({", ".join(f"%x{k}" for k in range(count))})
      <{{dimension = {dimension} : i64, is_stable = {str(stable).lower()}}}> ({{
  ^bb0({block}):
    %p = {comparator}
    stablehlo.return %p : tensor<i1>
  }}) : ({types}) -> ({types})
  return {results} : {types}
}}"""


@pytest.mark.parametrize("dimension", [0, 1, 2])
def test_float_sort_along_each_dimension(dimension):
    x = np.random.default_rng(dimension).standard_normal((3, 4, 5)).astype(np.float32)
    text = _sort_program(["tensor<3x4x5xf32>"], dimension,
                         "stablehlo.compare LT, %l0, %r0, TOTALORDER : "
                         "(tensor<f32>, tensor<f32>) -> tensor<i1>")
    (got,) = xlac.compile(text).run(x)
    np.testing.assert_array_equal(got, np.sort(x, axis=dimension))


def test_key_value_sort_is_stable():
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 4, size=(6, 33)).astype(np.uint32)
    values = np.tile(np.arange(33, dtype=np.int64), (6, 1))
    text = _sort_program(["tensor<6x33xui32>", "tensor<6x33xi64>"], 1,
                         "stablehlo.compare GT, %l0, %r0, UNSIGNED : "
                         "(tensor<ui32>, tensor<ui32>) -> tensor<i1>")
    got_keys, got_values = xlac.compile(text).run(keys, values)
    order = np.argsort(-keys.astype(np.int64), axis=1, kind="stable")
    np.testing.assert_array_equal(got_keys, np.take_along_axis(keys, order, 1))
    np.testing.assert_array_equal(got_values, order)


def test_total_order_puts_nans_last():
    x = np.array([np.nan, 2.0, -np.inf, 0.5, np.inf, -1.0, np.nan], dtype=np.float64)
    text = _sort_program(["tensor<7xf64>"], 0,
                         "stablehlo.compare LT, %l0, %r0, TOTALORDER : "
                         "(tensor<f64>, tensor<f64>) -> tensor<i1>")
    (got,) = xlac.compile(text).run(x)
    np.testing.assert_array_equal(got, np.sort(x))


@pytest.mark.parametrize("n", [1, 2, 17, 64])
def test_lengths_around_powers_of_two(n):
    x = np.random.default_rng(n).integers(-50, 50, size=(2, n)).astype(np.int8)
    text = _sort_program([f"tensor<2x{n}xi8>"], 1,
                         "stablehlo.compare LT, %l0, %r0, SIGNED : "
                         "(tensor<i8>, tensor<i8>) -> tensor<i1>")
    (got,) = xlac.compile(text).run(x)
    np.testing.assert_array_equal(got, np.sort(x, axis=1))


def test_top_k():
    x = np.random.default_rng(7).standard_normal((5, 9)).astype(np.float32)
    text = """
func.func @main(%x: tensor<5x9xf32>) -> (tensor<5x3xf32>, tensor<5x3xi32>) {
  %v, %i = chlo.top_k(%x, k = 3) : tensor<5x9xf32> -> (tensor<5x3xf32>, tensor<5x3xi32>)
  return %v, %i : tensor<5x3xf32>, tensor<5x3xi32>
}"""
    values, indices = xlac.compile(text).run(x)
    order = np.argsort(-x, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, 1))


@pytest.mark.parametrize("element, k", [("f32", 3), ("bf16", 5), ("i32", 2)])
def test_top_k_selection_matches_the_stable_sort_bit_for_bit(element, k):
    """xla-lower-top-k's one-pass selection against chlo's own legalization (a
    stable total-order sort), on rows with ties, NaNs, infinities and signed zeros."""
    import ml_dtypes
    program = (f"func.func @main(%x: tensor<6x40x{element}>) -> (tensor<6x{k}x{element}>, tensor<6x{k}xi32>) {{\n"
               f"  %v, %i = chlo.top_k(%x, k = {k}) : tensor<6x40x{element}> -> "
               f"(tensor<6x{k}x{element}>, tensor<6x{k}xi32>)\n"
               f"  return %v, %i : tensor<6x{k}x{element}>, tensor<6x{k}xi32>\n}}")
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (6, 40)).astype(np.float32)
    if element != "i32":
        x[0, :6] = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0]
    dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "i32": np.int32}[element]
    x = x.astype(dtype)
    fast = xlac.compile(program, cache=False)
    sort = xlac.compile(program, cache=False,
                        disable_passes=("xla-outline-top-k", "xla-sort-slice-to-top-k"))
    for got, want in zip(fast(x), sort(x)):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))


# The radix sort (a comparator that is `key < key'` or `>` of a signless integer):
# every key width, both signs of keys, both orders, values moved along, ties stable.
@pytest.mark.parametrize("element,direction", [
    ("i8", "LT"), ("i8", "GT"), ("i16", "LT"), ("i32", "LT"), ("i32", "GT"),
    ("i64", "LT"), ("i64", "GT"), ("ui8", "LT"), ("ui16", "GT"), ("ui32", "LT"), ("ui64", "GT")])
def test_radix_sort_of_integer_keys_with_values(element, direction):
    rng = np.random.default_rng(7)
    unsigned = element.startswith("ui")
    dtype = np.dtype(("uint" if unsigned else "int") + element.lstrip("ui"))
    info = np.iinfo(dtype)
    keys = rng.integers(info.min, info.max, size=(5, 77), dtype=dtype, endpoint=True)
    edges = [int(info.min), int(info.max), 0, -1, 1, int(info.min), 0, int(info.max), -1]
    keys[:, :9] = np.array([v % (int(info.max) + 1) if unsigned else v for v in edges],
                           dtype=dtype)           # extremes and ties (-1: the largest unsigned)
    values = np.tile(np.arange(77, dtype=np.int32), (5, 1))
    text = _sort_program([f"tensor<5x77x{element}>", "tensor<5x77xi32>"], 1,
                         f"stablehlo.compare {direction}, %l0, %r0, {'UNSIGNED' if unsigned else 'SIGNED'} : "
                         f"(tensor<{element}>, tensor<{element}>) -> tensor<i1>")
    exe = xlac.compile(text)
    assert "scf.forall" in exe.as_text("linalg") and "_cmp" not in exe.as_text("linalg")
    got_keys, got_values = exe.run(keys, values)
    rank = np.unique(keys, return_inverse=True)[1].reshape(keys.shape)   # no overflow at -min
    order = np.argsort(rank if direction == "LT" else -rank, axis=1, kind="stable")
    np.testing.assert_array_equal(got_keys, np.take_along_axis(keys, order, 1))
    np.testing.assert_array_equal(got_values, order)


@pytest.mark.parametrize("dimension", [0, 1])
def test_radix_sort_along_an_outer_axis_and_few_distinct_keys(dimension):
    keys = np.random.default_rng(dimension).integers(0, 8, size=(64, 48)).astype(np.int32)
    text = _sort_program(["tensor<64x48xi32>"], dimension,
                         "stablehlo.compare LT, %l0, %r0 : (tensor<i32>, tensor<i32>) -> tensor<i1>")
    (got,) = xlac.compile(text).run(keys)
    np.testing.assert_array_equal(got, np.sort(keys, axis=dimension))


def test_a_comparator_on_the_second_operand_keeps_the_merge_sort():
    keys = np.random.default_rng(3).integers(0, 5, size=(4, 20)).astype(np.int32)
    values = np.random.default_rng(4).integers(0, 100, size=(4, 20)).astype(np.int32)
    text = _sort_program(["tensor<4x20xi32>", "tensor<4x20xi32>"], 1,
                         "stablehlo.compare LT, %l1, %r1, SIGNED : "
                         "(tensor<i32>, tensor<i32>) -> tensor<i1>")
    exe = xlac.compile(text)
    assert "arith.shrui" not in exe.as_text("linalg")        # no radix: merge sort's loops
    got_keys, got_values = exe.run(keys, values)
    order = np.argsort(values, axis=1, kind="stable")
    np.testing.assert_array_equal(got_values, np.take_along_axis(values, order, 1))
    np.testing.assert_array_equal(got_keys, np.take_along_axis(keys, order, 1))
