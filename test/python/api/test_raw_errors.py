"""No raw exception escapes a compile: whatever Python or the bindings raise
becomes an xlac error naming the input; diagnostics that cannot be read
become placeholder records instead of raising inside MLIR's handler."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import xlac
from xlac.errors import DiagnosticCollector, record_of
from xlac.pipeline import stage_texts

PROGRAM = ("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
           "  return %a : tensor<4xf32>\n}\n")


class _Unreadable:
    """A diagnostic whose every field raises as the bindings do on text that is not UTF-8."""

    def __getattr__(self, name):
        raise UnicodeDecodeError("utf-8", b"\x89", 0, 1, "invalid start byte")


def test_a_diagnostic_that_cannot_be_read_is_a_placeholder_record():
    record = record_of(_Unreadable())
    assert record.severity == "error" and record.location == "<unknown>"
    assert "not UTF-8" in record.message
    collector = DiagnosticCollector()
    assert collector(_Unreadable()) is True
    assert len(collector.records) == 1


@pytest.mark.parametrize("raised", [RuntimeError("pass failed"), RecursionError("too deep"),
                                    OverflowError("int too big"), AttributeError("no attr"),
                                    UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")])
def test_what_a_compile_raises_becomes_a_compile_error_naming_the_input(raised, monkeypatch):
    def fail(*args, **kwargs):
        raise raised
    monkeypatch.setattr(stage_texts, "StageTexts", fail)
    with pytest.raises(xlac.CompileError) as info:
        xlac.compile(PROGRAM, cache=False)
    message = str(info.value)
    assert message.startswith(f"<input>: error: xlac failed on this input: {type(raised).__name__}")
    assert "xlac bug" in message


def test_memory_error_is_a_compile_error(monkeypatch):
    def fail(*args, **kwargs):
        raise MemoryError
    monkeypatch.setattr(stage_texts, "StageTexts", fail)
    with pytest.raises(xlac.CompileError, match="out of memory while compiling"):
        xlac.compile(PROGRAM, cache=False)


def test_input_errors_stay_what_they_are():
    exe = xlac.compile(PROGRAM, cache=False)
    with pytest.raises(xlac.InputError):
        exe.run()


def test_xla_opt_on_a_name_that_is_not_utf8_exits_1_with_one_line(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_bytes(PROGRAM.replace("return %a", '%0 = "sta\\89lehlo.abs"(%a) : (tensor<4xf32>) '
                                     "-> tensor<4xf32>\n  return %0").encode())
    for isolate in ("1", "0"):
        done = subprocess.run([sys.executable, "-m", "xlac.tools.xla_opt", str(path)],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "XLAC_ISOLATE_INPUT": isolate})
        assert done.returncode == 1, done.stderr
        assert done.stderr.splitlines()[0] == (f"{path}: error: the program has an op or "
                                               "attribute name that is not UTF-8")
        assert "Traceback" not in done.stderr
