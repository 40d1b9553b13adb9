"""Bad programs give CompileError with file:line:col diagnostics, never a crash."""

from __future__ import annotations

import pytest

import xlac


def compile_error(source, **kwargs) -> str:
    with pytest.raises(xlac.CompileError) as info:
        xlac.compile(source, **kwargs)
    return str(info.value)


def test_parse_error_has_file_line_col(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %0 = stablehlo.add %a, %b : tensor<2xf32>\n"
                    "  return %0 : tensor<2xf32>\n}\n")
    message = compile_error(path)
    assert f"{path}:2:" in message and "use of undeclared SSA value name" in message


_TWO_FUNCTIONS = """// aliases first, as mlir-opt prints them
#scalar = affine_map<(d0) -> ()>
!t = tensor<2xf32>
func.func private @twice(%a: !t) -> !t {
  %0 = stablehlo.add %a, %a : !t
  return %0 : !t
}
func.func @main(%a: !t) -> !t {
  %0 = func.call @twice(%a) : (!t) -> !t
  %1 = stablehlo.multiply %0, %b : !t
  return %1 : !t
}
"""


def test_several_functions_after_aliases_parse_with_their_lines():
    """Top-level functions after alias definitions are wrapped in a module (as
    mlir-opt does) without moving a line: aliases cannot be inside it."""
    import numpy as np
    fixed = _TWO_FUNCTIONS.replace("%0, %b", "%0, %a")
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(xlac.compile(fixed).run(x)[0], 2 * x * x)
    assert "<input>:10:31: error: use of undeclared SSA value name" in compile_error(_TWO_FUNCTIONS)


def test_verifier_error_points_at_the_op():
    message = compile_error("func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
                            "  return %a : tensor<2xf32>\n}")
    assert "<input>:2:3: error: type of return operand 0" in message


def test_unknown_op():
    message = compile_error("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                            "  %0 = stablehlo.frobnicate %a : tensor<2xf32>\n"
                            "  return %0 : tensor<2xf32>\n}")
    assert "<input>:2:8: error: custom op 'stablehlo.frobnicate' is unknown" in message


def test_every_unsupported_op_is_listed_with_its_location():
    message = compile_error("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                            "  %0 = stablehlo.custom_call @one(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
                            "  %1 = stablehlo.custom_call @two(%0) : (tensor<4xf32>) -> tensor<4xf32>\n"
                            "  return %1 : tensor<4xf32>\n}")
    assert "<input>:2:8: error: 'stablehlo.custom_call' is not supported on cpu" in message
    assert "<input>:3:8: error: 'stablehlo.custom_call' is not supported on cpu" in message
    assert "docs/op-support.md" in message


def test_missing_entry_lists_the_functions():
    message = compile_error("func.func @forward(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                            "  return %a : tensor<2xf32>\n}")
    assert "no function @main in the module (functions: @forward)" in message


@pytest.mark.parametrize("source, expected", [
    ("", "the input is empty"),
    (b"\x00\x01garbage", "error"),
    (b"ML\xefR\x00garbage-bytecode", "error"),
    ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a", "truncated"),
    ("module { func.func @main(", "truncated"),
])
def test_garbage_and_truncated_input(source, expected):
    assert expected in compile_error(source)


def test_object_of_the_wrong_kind():
    assert "cannot compile an object of type int" in compile_error(42)


def test_missing_file():
    from pathlib import Path
    assert "cannot read file" in compile_error(Path("/nonexistent/model.mlir"))
