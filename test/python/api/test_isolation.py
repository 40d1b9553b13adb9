"""Untrusted programs are parsed in a worker process: its crash or hang is a
CompileError, never the caller's death (docs/security.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import xlac
from xlac.frontend import isolation

PROGRAM = (b"func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
           b"  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
           b"  return %0 : tensor<4xf32>\n}\n")
# Nested far past the parser's stack: MLIR's type parser recurses per level.
DEEP = (b"func.func @main(%a: " + b"tuple<" * 200000 + b"tensor<4xf32>" + b">" * 200000
        + b") {\n  return\n}\n")


def test_a_parser_crash_is_a_compile_error_naming_the_input_and_the_signal():
    # vet() directly: the pre-checks in front of it would refuse this input first
    with pytest.raises(xlac.CompileError) as info:
        isolation.vet(DEEP, "deep.mlir", timeout=60)
    message = str(info.value)
    assert message.startswith("deep.mlir: error: the MLIR parser crashed (SIGSEGV) on this input")
    # and the next program gets a fresh worker
    assert isolation.vet(PROGRAM, "next.mlir", timeout=60).bytecode.startswith(b"ML\xefR")


def test_a_parse_over_its_time_is_stopped_as_a_compile_error():
    with pytest.raises(xlac.CompileError) as info:
        isolation.vet(PROGRAM, "slow.mlir", timeout=1e-6)
    assert "slow.mlir: error: parsing this input took longer than" in str(info.value)
    assert "XLAC_PARSE_TIMEOUT" in str(info.value)
    assert isolation.vet(PROGRAM, "again.mlir", timeout=60).bytecode


def test_isolated_and_in_process_parses_give_the_same_diagnostics():
    bad = PROGRAM.replace(b"%a, %a", b"%a, %b")
    messages = []
    for isolate in (True, False):
        options = xlac.Options().replace(isolate_input=isolate, cache_dir=None)
        with pytest.raises(xlac.CompileError) as info:
            xlac.compile(bad, options=options)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "<bytes>:2:26: error: use of undeclared SSA value name" in messages[0]


def test_an_isolated_compile_runs():
    import numpy as np
    exe = xlac.compile(PROGRAM, options=xlac.Options().replace(cache_dir=None))
    assert exe.run(np.ones(4, np.float32))[0].tolist() == [2.0] * 4


def test_the_knob_reads_the_environment():
    assert xlac.Options.from_env({}).isolate_input is True
    assert xlac.Options.from_env({"XLAC_ISOLATE_INPUT": "0"}).isolate_input is False
    assert xlac.Options.from_env({"XLAC_PARSE_TIMEOUT": "2.5"}).parse_timeout == 2.5
    assert xlac.Options.from_env({"XLAC_PARSE_TIMEOUT": "x"}).parse_timeout == 20.0


@pytest.mark.parametrize("text, expected", [
    (DEEP, "deep.mlir:1:"),
    (b"func.func @main(%a: " + b"(" * 5000 + b")" * 5000, "deep.mlir:1:"),
    (PROGRAM.replace(b"tensor<4xf32>)", b"tensor<99999999999x99999999999xf32>)"),
     "a shape with more than 2^40 elements"),
])
def test_the_pre_checks_refuse_absurd_text_with_a_location(text, expected):
    with pytest.raises(xlac.CompileError) as info:
        xlac.compile(text.decode(), options=xlac.Options().replace(isolate_input=False))
    assert expected.replace("deep.mlir", "<input>") in str(info.value)


def test_names_that_are_not_utf8_are_refused_before_they_reach_a_walk():
    # generic form spells the op name with a \89 escape: not UTF-8 once parsed
    text = PROGRAM.replace(b"stablehlo.add %a, %a : tensor<4xf32>",
                           b'"sta\\89lehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) '
                           b"-> tensor<4xf32>")
    with pytest.raises(xlac.CompileError):
        xlac.compile(text, options=xlac.Options().replace(cache_dir=None))


def test_xla_opt_reports_a_crash_in_one_line_and_exits_1(tmp_path):
    path = tmp_path / "deep.mlirbc"
    path.write_bytes(b"ML\xefR" + bytes(range(256)) * 4)   # bytecode pre-checks cannot judge
    done = subprocess.run([sys.executable, "-m", "xlac.tools.xla_opt", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.startswith(f"{path}: error:")
    assert "Traceback" not in done.stderr


def test_bytecode_nested_thousands_deep_is_refused_quickly():
    # tuples 2000 deep took ingest 15 s; as bytecode the text pre-checks never saw them
    import io
    import time

    from xlac.context import new_context
    from xlac.mlir import ir
    text = ("func.func @main(%a: tensor<4xf32>, %t: " + "tuple<" * 2000 + "tensor<4xf32>"
            + ">" * 2000 + ") -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n")
    with new_context():
        buffer = io.BytesIO()
        ir.Module.parse(text).operation.write_bytecode(buffer)
    start = time.monotonic()
    with pytest.raises(xlac.CompileError) as info:
        xlac.compile(buffer.getvalue(), options=xlac.Options().replace(cache_dir=None))
    assert str(info.value).startswith("<bytes>: error: the input nests brackets, regions or "
                                      "types more than 400 deep")
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("isolate", [True, False])
def test_an_op_of_no_known_dialect_is_refused_at_its_location(isolate):
    # a corrupted name parses as an unregistered op, and passes crashed on it
    text = PROGRAM.replace(b"stablehlo.add %a, %a : tensor<4xf32>",
                           b'"stablehao.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) '
                           b"-> tensor<4xf32>")
    with pytest.raises(xlac.CompileError) as info:
        xlac.compile(text, options=xlac.Options().replace(isolate_input=isolate, cache_dir=None))
    assert str(info.value).startswith("<bytes>:2:8: error: 'stablehao.add' is not an op of any "
                                      "dialect xlac knows")
