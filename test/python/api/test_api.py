"""The public API of DESIGN.md section 4: compile, run, call, signature, as_text."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import xlac

SCALE = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<f32>) -> (tensor<2x3xf32>, tensor<f32>) {
  %0 = stablehlo.broadcast_in_dim %b, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = stablehlo.multiply %a, %0 : tensor<2x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %init) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
  return %1, %2 : tensor<2x3xf32>, tensor<f32>
}
"""


def scale_inputs():
    return np.arange(6, dtype=np.float32).reshape(2, 3), np.array(2.0, np.float32)


def test_run_returns_a_list_and_call_a_tuple():
    exe = xlac.compile(SCALE)
    a, b = scale_inputs()
    outs = exe.run(a, b)
    assert isinstance(outs, list) and len(outs) == 2
    np.testing.assert_array_equal(outs[0], a * b)
    assert outs[1].shape == () and outs[1] == (a * b).sum()
    first, second = exe(a, b)
    np.testing.assert_array_equal(first, a * b)


def test_single_result_call_returns_the_array():
    exe = xlac.compile("func.func @main(%x: tensor<3xi32>) -> tensor<3xi32> {\n"
                       "  %0 = stablehlo.add %x, %x : tensor<3xi32>\n"
                       "  return %0 : tensor<3xi32>\n}")
    out = exe(np.array([1, 2, 3], np.int32))
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, [2, 4, 6])


def test_signature_lists_shapes_and_dtypes():
    sig = xlac.compile(SCALE).signature
    assert [s.shape for s in sig.inputs] == [(2, 3), ()]
    assert [s.dtype for s in sig.outputs] == [np.float32, np.float32]
    assert str(sig) == "(f32[2,3], f32[]) -> (f32[2,3], f32[])"


def test_outputs_are_fresh_and_inputs_untouched():
    exe = xlac.compile(SCALE)
    a, b = scale_inputs()
    before = a.copy()
    first = exe.run(a, b)[0]
    second = exe.run(a, b)[0]
    assert first is not second and not np.shares_memory(first, second)
    assert not np.shares_memory(first, a)
    np.testing.assert_array_equal(a, before)
    first[:] = -1
    np.testing.assert_array_equal(exe.run(a, b)[0], a * b)


def test_an_identity_result_is_a_copy_of_the_input():
    exe = xlac.compile("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                       "  return %x : tensor<4xf32>\n}")
    x = np.arange(4, dtype=np.float32)
    out = exe(x)
    np.testing.assert_array_equal(out, x)
    assert not np.shares_memory(out, x)


def test_non_contiguous_inputs_are_accepted():
    exe = xlac.compile(SCALE)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:2, :3]
    np.testing.assert_array_equal(exe(a, np.float32(1))[0], a)


def test_python_scalars_take_the_compiled_dtype():
    exe = xlac.compile(SCALE)
    a, _ = scale_inputs()
    np.testing.assert_array_equal(exe(a, 3)[0], a * 3)


def test_input_error_names_every_mismatch():
    exe = xlac.compile(SCALE)
    with pytest.raises(xlac.InputError) as info:
        exe.run(np.zeros((2, 4), np.float32), np.zeros((), np.int32))
    message = str(info.value)
    assert "argument 0 compiled for f32[2,3], called with f32[2,4]" in message
    assert "argument 1 compiled for f32[], called with s32[]" in message


def test_input_error_on_wrong_argument_count():
    exe = xlac.compile(SCALE)
    with pytest.raises(xlac.InputError, match=r"expected 2 argument\(s\) \(f32\[2,3\], f32\[\]\), got 1"):
        exe.run(np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("source_kind", ["str", "bytes", "path", "staged"])
def test_every_source_kind(tmp_path, source_kind):
    class Lowered:   # what jax.jit(f).lower(x) looks like to xlac
        def as_text(self, dialect=None):
            return SCALE

    path = tmp_path / "scale.mlir"
    path.write_text(SCALE)
    source = {"str": SCALE, "bytes": SCALE.encode(), "path": Path(path),
              "staged": Lowered()}[source_kind]
    a, b = scale_inputs()
    np.testing.assert_array_equal(xlac.compile(source)(a, b)[0], a * b)


def test_bytecode_input(tmp_path):
    import io

    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    module = parse_module(new_context(), SCALE.encode(), "scale")
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    a, b = scale_inputs()
    np.testing.assert_array_equal(xlac.compile(buffer.getvalue())(a, b)[0], a * b)


def test_as_text_at_every_stage():
    exe = xlac.compile(SCALE)
    assert "stablehlo.multiply" in exe.as_text("input")
    assert "stablehlo.reduce" in exe.as_text("stablehlo")
    assert "linalg.generic" in exe.as_text("linalg")
    assert "memref<2x3xf32>" in exe.as_text("bufferized")
    assert "llvm.func @main" in exe.as_text("llvm")
    with pytest.raises(xlac.CompileError, match="no stage 'ptx'"):
        exe.as_text("ptx")


def test_entry_selects_the_function():
    text = SCALE + """
func.func @double(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = stablehlo.add %x, %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}"""
    exe = xlac.compile(text, entry="double")
    np.testing.assert_array_equal(exe(np.arange(4, dtype=np.int32)), [0, 2, 4, 6])


def test_constants_and_zero_d_results():
    exe = xlac.compile("func.func @main() -> (tensor<f32>, tensor<2xi64>) {\n"
                       "  %0 = stablehlo.constant dense<1.5> : tensor<f32>\n"
                       "  %1 = stablehlo.constant dense<[7, -8]> : tensor<2xi64>\n"
                       "  return %0, %1 : tensor<f32>, tensor<2xi64>\n}")
    scalar, vector = exe.run()
    assert scalar.shape == () and scalar == 1.5
    np.testing.assert_array_equal(vector, [7, -8])


ELEMENT_TYPES = [
    ("i1", np.bool_), ("i8", np.int8), ("ui8", np.uint8), ("i16", np.int16),
    ("ui16", np.uint16), ("i32", np.int32), ("ui32", np.uint32), ("i64", np.int64),
    ("ui64", np.uint64), ("f16", np.float16), ("bf16", ml_dtypes.bfloat16),
    ("f32", np.float32), ("f64", np.float64), ("complex<f32>", np.complex64),
    ("complex<f64>", np.complex128),
]


@pytest.mark.parametrize("element, dtype", ELEMENT_TYPES)
def test_element_types_round_trip(element, dtype):
    exe = xlac.compile(f"func.func @main(%x: tensor<5x{element}>) -> tensor<5x{element}> {{\n"
                       f"  return %x : tensor<5x{element}>\n}}")
    x = (np.arange(5) % 2 == 1) if dtype is np.bool_ else np.arange(5).astype(dtype)
    out = exe(x)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, x)


def test_storage_bytes_are_the_numpy_itemsize_of_every_element_type():
    """A cache hit sizes buffers with ``storage_bytes`` (no numpy): it must agree."""
    from xlac.dtypes import _BASIC, _ML_DTYPES, numpy_dtype, storage_bytes
    for element in [*_BASIC, *_ML_DTYPES]:
        assert storage_bytes(element) == numpy_dtype(element).itemsize, element
    with pytest.raises(ValueError, match="no numpy dtype"):
        storage_bytes("index")


def test_sub_byte_integers_keep_their_sign():
    exe = xlac.compile("func.func @main(%x: tensor<4xi4>) -> tensor<4xi4> {\n"
                       "  %0 = stablehlo.negate %x : tensor<4xi4>\n"
                       "  return %0 : tensor<4xi4>\n}")
    np.testing.assert_array_equal(exe(np.array([1, -2, 7, 0], np.int8)), [-1, 2, -7, 0])


def test_unknown_target_is_a_compile_error():
    with pytest.raises(xlac.CompileError, match="unknown target 'tpu'"):
        xlac.compile(SCALE, target="tpu")


def test_in_place_updates_never_write_into_the_inputs():
    exe = xlac.compile("func.func @main(%x: tensor<4xf32>, %u: tensor<1xf32>) -> tensor<4xf32> {\n"
                       "  %i = stablehlo.constant dense<1> : tensor<i32>\n"
                       "  %0 = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<4xf32>, "
                       "tensor<1xf32>, tensor<i32>) -> tensor<4xf32>\n"
                       "  return %0 : tensor<4xf32>\n}")
    x = np.zeros(4, np.float32)
    np.testing.assert_array_equal(exe(x, np.ones(1, np.float32)), [0, 1, 0, 0])
    np.testing.assert_array_equal(x, 0)


@pytest.mark.parametrize("element, dtype, expected", [
    ("i32", np.int32, [0, 2147483647, -2147483648, 3, -3]),
    ("ui8", np.uint8, [0, 255, 0, 3, 0]),
    ("i8", np.int8, [0, 127, -128, 3, -3]),
])
def test_float_to_int_conversion_saturates_as_xla_does(element, dtype, expected):
    exe = xlac.compile(f"func.func @main(%x: tensor<5xf32>) -> tensor<5x{element}> {{\n"
                       f"  %0 = stablehlo.convert %x : (tensor<5xf32>) -> tensor<5x{element}>\n"
                       f"  return %0 : tensor<5x{element}>\n}}")
    x = np.array([np.nan, 1e10, -1e10, 3.7, -3.7], np.float32)
    np.testing.assert_array_equal(exe(x), np.array(expected, dtype))
