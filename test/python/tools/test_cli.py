"""xla-opt and xla-run as a new user meets them: good runs and bad input.

Bad input must give a one-line diagnostic (plus an optional note saying what
to try), exit code 1, no Python traceback, no crash and no hang.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
GOOD = """func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.add %a, %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""


def run(tool: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / tool), *args], input=stdin, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def good(tmp_path) -> Path:
    path = tmp_path / "good.mlir"
    path.write_text(GOOD)
    return path


def assert_clean_failure(done: subprocess.CompletedProcess, expected: str) -> None:
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert expected in done.stderr
    errors = [line for line in done.stderr.splitlines() if ": error: " in line or
              line.startswith("error:")]
    assert errors, done.stderr


def test_xla_run_prints_results(good):
    done = run("xla-run", str(good), "--input=2x3xf32=1,2,3,4,5,6")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["EXEC @main", "result[0]: 2x3xf32=[2 4 6][8 10 12]"]


def test_xla_run_reads_stdin():
    done = run("xla-run", "-", "--input=2x3xf32=1", stdin=GOOD)
    assert done.returncode == 0 and "2x3xf32=[2 2 2][2 2 2]" in done.stdout


def test_xla_opt_round_trips_stdin():
    done = run("xla-opt", stdin=GOOD)
    assert done.returncode == 0 and "stablehlo.add" in done.stdout


@pytest.mark.parametrize("text, expected", [
    (GOOD[:60], "truncated"),
    (GOOD.replace("stablehlo.add", "stablehlo.plus"), "custom op 'stablehlo.plus' is unknown"),
    (GOOD.replace("%a, %a : tensor<2x3xf32>", "%a, %a : tensor<2x4xf32>"), "error:"),
    ("this is not MLIR", "error:"),
])
def test_bad_programs(tmp_path, text, expected):
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    for tool, extra in (("xla-run", ["--input=2x3xf32=1"]), ("xla-opt", [])):
        assert_clean_failure(run(tool, str(path), *extra), expected)


@pytest.mark.parametrize("args, expected", [
    (["--input=2x3xf32=1,2"], "has 2 values for a shape of 6 elements"),
    (["--input=3x3xf32=1"], "argument 0 compiled for f32[2,3], called with f32[3,3]"),
    ([], "expected 1 argument(s) (f32[2,3]), got 0"),
    (["--input=2x3xwat=1"], "unknown element type 'wat'"),
    (["--input=banana"], "expected SHAPExTYPE=VALUES"),
    (["--input=2x3xf32=a,b"], "bad value in --input"),
    (["--input=@/nonexistent.npy"], "cannot read --input=@/nonexistent.npy"),
    (["--function=nope", "--input=2x3xf32=1"], "no function @nope in the module (functions: @main)"),
    (["--target=tpu", "--input=2x3xf32=1"], "unknown target 'tpu'"),
])
def test_xla_run_bad_arguments(good, args, expected):
    assert_clean_failure(run("xla-run", str(good), *args), expected)


def test_missing_input_file():
    for tool in ("xla-run", "xla-opt"):
        assert_clean_failure(run(tool, "/nonexistent/model.mlir"), "cannot read file")


@pytest.mark.parametrize("pipeline, expected", [
    ("builtin.module(no-such-pass)", "does not refer to a registered pass"),
    ("builtin.module(canonicalize", "expected ')'"),
    ("builtin.module(xla-select-entry{nope=1})", "has no option 'nope'"),
])
def test_xla_opt_bad_pipelines(good, pipeline, expected):
    assert_clean_failure(run("xla-opt", str(good), f"--pass-pipeline={pipeline}"), expected)


REMARKED = """func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = stablehlo.exponential %x : tensor<4xf32>
  %n = stablehlo.negate %e : tensor<4xf32>
  %m = stablehlo.multiply %e, %e : tensor<4xf32>
  return %n, %m : tensor<4xf32>, tensor<4xf32>
}
"""


def test_xla_opt_fusion_remarks_are_one_line_each(tmp_path):
    """Each remark is its place and its reason; MLIR's dump of the op (a note
    that made thousands of remarks quadratic) is neither made nor printed."""
    path = tmp_path / "remarked.mlir"
    path.write_text(REMARKED)
    done = run("xla-opt", str(path), "--xla-stage=fused", "--xla-fusion-remarks", "-o", "/dev/null")
    assert done.returncode == 0, done.stderr
    assert sorted(done.stderr.splitlines()) == [
        f"{path}:2:8: remark: not fused into the fusion rooted at 'stablehlo.multiply' (line 4): "
        "producer has 2 consumers and is expensive",
        f"{path}:2:8: remark: not fused into the fusion rooted at 'stablehlo.negate' (line 3): "
        "producer has 2 consumers and is expensive"]
