"""What users of mlir-opt and iree-run-module type, typed at xla-opt and
xla-run (issue 14, stumbles 6, 7 and 9): the same spellings work, a closed
pipe ends quietly, a wrong setting is the user's, not "an xlac bug"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BIN = Path(sys.executable).parent
DOUBLE = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  %1 = stablehlo.add %a, %a : tensor<2xf32>
  %2 = stablehlo.add %0, %1 : tensor<2xf32>
  return %2 : tensor<2xf32>
}
"""
TWO_RESULTS = """func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  return %0, %a : tensor<2xf32>, tensor<2xf32>
}
"""


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / args[0]), *args[1:]], input=stdin, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def program(tmp_path) -> Path:
    path = tmp_path / "double.mlir"
    path.write_text(DOUBLE)
    return path


def test_per_pass_flags_run_in_order_as_in_mlir_opt(program):
    done = run("xla-opt", str(program), "--canonicalize", "--cse")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("stablehlo.add") == 2            # cse merged the twin add


def test_per_pass_flags_take_options_and_nest_function_passes(program):
    done = run("xla-opt", str(program), "--xla-ingest",
               "--canonicalize=max-iterations=3 region-simplify=disabled",
               "--stablehlo-canonicalize-dynamism", "--cse")   # a func.func-only pass
    assert done.returncode == 0, done.stderr
    assert "func.func public @main" in done.stdout


def test_unknown_flag_is_named(program):
    done = run("xla-opt", str(program), "--no-such-pass")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "unknown option '--no-such-pass'" in done.stderr


def test_per_pass_flags_and_a_pipeline_do_not_mix(program):
    done = run("xla-opt", str(program), "--cse", "--pass-pipeline=builtin.module(cse)")
    assert done.returncode == 1 and "cannot be combined with per-pass flags" in done.stderr


def test_single_dash_long_options(program, tmp_path):
    out = tmp_path / "out.mlir"
    done = run("xla-opt", "-pass-pipeline=builtin.module(cse)", str(program), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text().count("stablehlo.add") == 2
    done = run("xla-opt", str(program), "-mlir-print-debuginfo", "-cse")
    assert done.returncode == 0 and "loc(" in done.stdout, done.stderr


@pytest.mark.parametrize("tool", ["xla-opt", "xla-run", "xla-compile"])
def test_version(tool):
    done = run(tool, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{tool} (xlac ") and "torch-mlir" in done.stdout


def test_closed_pipe_is_quiet():
    done = subprocess.run(f"'{BIN / 'xla-opt'}' --list-passes | head -1", shell=True,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("xlac passes:")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_iree_run_module_spellings(tmp_path):
    path = tmp_path / "two.mlir"
    path.write_text(TWO_RESULTS)
    first, second = tmp_path / "a.npy", tmp_path / "b.npy"
    done = run("xla-run", f"--module={path}", "--device=local-task", "--entry_function=main",
               "--input=2xf32=3", f"--output=@{first}", f"--output=@{second}")
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(first), [6, 6])
    np.testing.assert_array_equal(np.load(second), [3, 3])
    done = run("xla-run", f"--module={path}", "--device=local-sync", "--function=main",
               "--input=2xf32=1", f"--output=@{first}", f"--output=+{first}")
    with open(first, "rb") as handle:               # + appends: both results, in order
        assert [np.load(handle).tolist() for _ in range(2)] == [[2, 2], [1, 1]]


def test_one_output_for_two_results_is_refused_not_half_saved(tmp_path):
    path = tmp_path / "two.mlir"
    path.write_text(TWO_RESULTS)
    done = run("xla-run", str(path), "--input=2xf32=3", f"--output=@{tmp_path / 'a.npy'}")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "2 result(s) but 1 --output" in done.stderr
    assert not (tmp_path / "a.npy").exists()


def test_unknown_device_is_named(program):
    done = run("xla-run", str(program), "--device=vulkan", "--input=2xf32=1")
    assert done.returncode == 1 and "unknown --device 'vulkan'" in done.stderr


def test_benchmark_without_inputs_says_what_to_pass(program):
    done = run("xla-run", str(program), "--benchmark=20")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "e.g. --input=2xf32=0" in done.stderr
    done = run("xla-run", str(program), "--input=2xf32=0", "--benchmark=20")
    assert done.returncode == 0 and "benchmark: 20 runs" in done.stdout, done.stderr


def test_disabling_a_needed_lowering_is_the_users_setting(tmp_path):
    path = tmp_path / "loop.mlir"
    path.write_text("""func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c3 = stablehlo.constant dense<30> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %x = %a) : tensor<i32>, tensor<4xf32>
   cond {
    %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n = stablehlo.add %i, %c1 : tensor<i32>
    %y = stablehlo.exponential %x : tensor<4xf32>
    stablehlo.return %n, %y : tensor<i32>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}
""")
    done = run("xla-run", str(path), "--input=4xf32=0", "--disable-passes=xla-lower-control-flow")
    assert done.returncode == 1
    assert "'stablehlo.while' was not lowered (xla-lower-control-flow lowers it)" in done.stderr
    assert "passes are disabled (xla-lower-control-flow;" in done.stderr
    assert "xlac bug" not in done.stderr
    done = run("xla-run", str(path), "--input=4xf32=0", "--disable-passes=xla-inline-fusions")
    assert done.returncode == 1 and "cannot disable xla-inline-fusions" in done.stderr
