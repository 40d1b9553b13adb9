"""Programs with `?` dimensions: compiled per call shape, reused, checked against numpy.

The programs are written by hand the way JAX exports shape-polymorphic
functions: `?` in the entry's types, sizes read with get_dimension_size,
and private functions taking a dimension as a scalar argument.
"""

import logging

import numpy as np
import pytest

import xlac

ADD = """
func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.add %x, %y : tensor<?xf32>
  return %0 : tensor<?xf32>
}"""

MATMUL = """
func.func @main(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}"""

ROWS = """
func.func @main(%x: tensor<?x?xi32>) -> (tensor<i32>, tensor<i32>) {
  %0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x?xi32>) -> tensor<i32>
  %1 = stablehlo.get_dimension_size %x, dim = 1 : (tensor<?x?xi32>) -> tensor<i32>
  return %0, %1 : tensor<i32>, tensor<i32>
}"""

# x + b with b broadcast to a shape computed from x's size, in a private
# function that takes the size as an argument (as jax.export does).
BIAS = """
func.func public @main(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %r = call @bias(%n, %x, %b) : (tensor<i32>, tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
func.func private @bias(%n: tensor<i32>, %x: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %c4 = stablehlo.constant dense<4> : tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %bb = stablehlo.dynamic_broadcast_in_dim %b, %shape, dims = [1]
      : (tensor<4xf32>, tensor<2xi32>) -> tensor<?x4xf32>
  %0 = stablehlo.add %x, %bb : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}"""


def _f32(*shape):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def test_signature_has_none_for_dynamic_dims():
    exe = xlac.compile(MATMUL)
    assert exe.signature.inputs[0].shape == (None, 4)
    assert exe.signature.outputs[0].shape == (None, 3)
    assert str(exe.signature) == "(f32[?,4], f32[4,3]) -> (f32[?,3])"


@pytest.mark.parametrize("n", [0, 1, 7])
def test_add_of_any_length(n):
    x, y = _f32(n), _f32(n) + 1
    np.testing.assert_array_equal(xlac.compile(ADD)(x, y), x + y)


def test_matmul_with_dynamic_rows():
    exe = xlac.compile(MATMUL)
    w = _f32(4, 3)
    for rows in (2, 5):
        x = _f32(rows, 4)
        np.testing.assert_allclose(exe(x, w), x @ w, rtol=1e-5, atol=1e-6)


def test_get_dimension_size_sees_the_call_shape():
    rows, cols = xlac.compile(ROWS)(np.zeros((3, 5), np.int32))
    assert (int(rows), int(cols)) == (3, 5)


def test_dynamic_broadcast_with_computed_shape():
    exe = xlac.compile(BIAS)
    b = _f32(4)
    for rows in (1, 6):
        x = _f32(rows, 4)
        np.testing.assert_array_equal(exe(x, b), x + b)


def test_one_compile_per_shape_and_reuse(caplog):
    exe = xlac.compile(MATMUL)
    w = _f32(4, 3)
    with caplog.at_level(logging.INFO, logger="xlac"):
        for rows in (2, 2, 5, 2, 5):
            exe(_f32(rows, 4), w)
    assert exe.specializations == [((2, 4), (4, 3)), ((5, 4), (4, 3))]
    lines = [r.getMessage() for r in caplog.records if r.name == "xlac"]
    assert lines == [
        "compiling @main for f32[2,4], f32[4,3]: first call",
        "compiling @main for f32[5,4], f32[4,3]: first call with this shape "
        "(argument 0 was f32[2,4] in the previous call; 1 shape compiled before)"]


def test_specialization_is_a_static_executable():
    exe = xlac.compile(MATMUL)
    static = exe.specialize(np.empty((6, 4), np.float32), np.empty((4, 3), np.float32))
    assert static.signature.inputs[0].shape == (6, 4)
    assert exe.specialize(np.empty((6, 4), np.float32), _f32(4, 3)) is static


def test_wrong_rank_dtype_or_static_dim_is_an_input_error():
    exe = xlac.compile(MATMUL)
    bad = [(_f32(2, 4, 1), _f32(4, 3)),                      # rank
           (_f32(2, 4).astype(np.float64), _f32(4, 3)),      # dtype
           (_f32(2, 5), _f32(4, 3))]                         # static dim
    for args in bad:
        with pytest.raises(xlac.InputError, match=r"argument 0 compiled for f32\[\?,4\]"):
            exe(*args)
    assert exe.specializations == []


def test_inconsistent_shapes_fail_to_compile_with_the_shapes_named():
    with pytest.raises(xlac.CompileError, match=r"while compiling @main \(f32\[\?\], "
                                                r"f32\[\?\]\) for f32\[3\], f32\[4\]"):
        xlac.compile(ADD)(_f32(3), _f32(4))


def test_stages_after_stablehlo_need_a_call():
    exe = xlac.compile(ADD)
    assert "tensor<?xf32>" in exe.as_text("stablehlo")
    with pytest.raises(xlac.CompileError, match="exists once per shape signature"):
        exe.as_text("linalg")
    exe(_f32(3), _f32(3))
    assert "tensor<3xf32>" in exe.as_text("linalg")
