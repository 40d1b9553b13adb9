"""A long compile's progress: silent when short, a line per stage into a log,
a tqdm bar on a terminal counting passes, nothing with ``off``; the timing
report and the Chrome trace unchanged by it."""

from __future__ import annotations

import io
import json
import threading
import time

import pytest

import xlac
from xlac.debug import progress
from xlac.debug.progress import CompileProgress, compile_progress
from xlac.tools.common import tool_options

PROGRAM = """func.func @main(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0]
       : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.tanh %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""
STAGES = ["stablehlo", "fused", "linalg", "bufferized", "llvm", "machine code"]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_modes():
    assert compile_progress("off", "p", STAGES, 10) is None
    assert compile_progress("auto", "p", STAGES, 10, io.StringIO()).mode == "log"
    assert compile_progress("auto", "p", STAGES, 10, Terminal()).mode == "bar"
    with pytest.raises(ValueError, match="not one of auto, bar, log, off"):
        compile_progress("loud", "p", STAGES, 10)


def test_a_short_compile_shows_nothing():
    stream = io.StringIO()
    shown = CompileProgress("log", "p", STAGES, 10, stream, delay=60)
    shown("stablehlo", "stablehlo", 4)
    shown.close()
    assert stream.getvalue() == ""


def test_log_mode_writes_one_line_per_stage():
    stream = io.StringIO()
    shown = CompileProgress("log", "p.mlir", STAGES, 10, stream, delay=0)
    shown("stablehlo", "stablehlo", 4)
    shown("fused", "fuse-a", 1)
    shown("fused", "fuse-b", 1)
    shown("machine code", "llvm-jit (LLVM -O3)", 1)
    shown.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 4, lines
    assert "stage 1/6 stablehlo: 0/10 passes done" in lines[0]
    assert "stage 2/6 fused (fuse-a): 4/10 passes done" in lines[1]
    assert "stage 6/6 machine code (llvm-jit (LLVM -O3)): 6/10 passes done" in lines[2]
    assert lines[3].startswith("xlac: p.mlir: compiled in ")


def test_bar_counts_passes_and_names_the_running_one():
    stream = Terminal()
    shown = CompileProgress("bar", "p.mlir", STAGES, 4, stream, delay=0)
    assert shown.wants_steps
    shown("linalg", "xla-apply-schedules", 1)
    shown("llvm", "convert-func-to-llvm", 1)
    text = stream.getvalue()
    assert "xlac p.mlir" in text and "1/4 passes" in text
    assert "5/6 llvm: convert-func-to-llvm" in text
    shown.close()
    assert "2/4 passes" in stream.getvalue().split("\r")[-1]


def test_a_compile_logs_its_stages_and_keeps_its_trace(tmp_path, monkeypatch, capsys):
    """Progress and the trace together: one span per pass, the timing report whole."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    trace = tmp_path / "trace.json"
    options = xlac.Options.from_env().replace(progress="log", trace_to=str(trace), timing=True)
    xlac.compile(PROGRAM, options=options, cache=False)
    err = capsys.readouterr().err
    stage_lines = [line for line in err.splitlines() if line.startswith("xlac: <input>:")]
    assert [line.split(" stage ")[1].split()[1].rstrip(":") for line in stage_lines[:-1]] == \
        ["stablehlo", "fused", "linalg", "bufferized", "llvm", "machine"]
    assert "compiled in" in stage_lines[-1] and "Total Execution Time" in err
    spans = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]
    passes = [e for e in spans if e["cat"] != "stage"]
    from xlac.targets import get_target
    steps = get_target("cpu").pipeline("main", options)
    assert [e["name"] for e in passes[:-1]] == steps                  # one span per pass
    assert passes[-1]["name"].startswith("llvm-jit") and passes[-1]["cat"] == "machine code"


def test_bar_mode_runs_pass_by_pass_without_dumping(monkeypatch, capsys):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "_is_terminal", lambda stream: True)
    options = xlac.Options.from_env().replace(progress="auto")
    exe = xlac.compile(PROGRAM, options=options, cache=False)
    err = capsys.readouterr().err
    assert "passes" in err and "machine code: llvm-jit" in err
    assert exe.signature.outputs[0].shape == (8, 8)


def test_bad_mode_is_a_compile_error():
    with pytest.raises(xlac.CompileError, match="progress takes auto, bar, log or off"):
        xlac.compile(PROGRAM, options=xlac.Options.from_env().replace(progress="loud"),
                     cache=False)


class Args:
    def __init__(self, **values):
        self.__dict__.update(values)


def test_tool_flags():
    assert tool_options(Args(quiet=True, progress="")).progress == "off"
    assert tool_options(Args(quiet=False, progress="log")).progress == "log"


def test_the_clis_take_the_flags(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    program = tmp_path / "p.mlir"
    program.write_text(PROGRAM)
    tool = Path(sys.executable).parent / "xla-run"
    done = subprocess.run([str(tool), str(program), "--quiet", "--input=8x8xf32=1"],
                          capture_output=True, text=True, timeout=300,
                          env={"XLAC_CACHE_DIR": "", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and "xlac:" not in done.stderr, done.stderr
    done = subprocess.run([str(tool), str(program), "--progress", "loud"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "invalid choice: 'loud'" in done.stderr


def test_the_clock_thread_stops_while_paused_and_a_closed_display_stays_stopped():
    # a fork beside the progress display copies none of its thread's locks
    shown = CompileProgress("log", "p", ["a"], 3, io.StringIO(), delay=0)
    ticking = lambda: shown._ticker.is_alive()  # noqa: E731
    with progress.tickers_paused():
        assert not ticking()
    assert ticking()
    with progress.tickers_paused():
        shown.close()
    assert not ticking()


def test_pauses_from_many_threads_at_once():
    # piece workers start from a thread pool: each pauses the clocks around its fork
    shown = CompileProgress("log", "p", ["a"], 3, io.StringIO(), delay=0)
    errors = []

    def start_slowly():              # the clock made, then started a moment later
        shown._halt.clear()
        shown._ticker = threading.Thread(target=shown._tick, daemon=True)
        time.sleep(0.002)
        shown._ticker.start()

    shown._start_ticker = start_slowly

    def pause_often():
        try:
            for _ in range(20):
                with progress.tickers_paused():
                    pass
        except RuntimeError as error:
            errors.append(error)

    workers = [threading.Thread(target=pause_often) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert shown._ticker.is_alive()
    shown.close()
