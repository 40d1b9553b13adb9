"""Smoke test of the benchmark harness (bench/run.py --quick) in a subprocess."""

from __future__ import annotations

import datetime
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import cpu_mask  # noqa: E402

SUITE = REPO.parent / "shared" / "bench" / "suite"

needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                               reason="the benchmark compares with XLA: pip install -e '.[bench]'")
needs_suite = pytest.mark.skipif(not (SUITE / "manifest.json").exists(),
                                 reason=f"the benchmark suite is not at {SUITE}")

TINY = """\
func.func public @main(%a: tensor<8x8xf32>, %b: tensor<8xi32>) -> (tensor<8x8xf32>, tensor<8xi32>) {
  %0 = stablehlo.multiply %a, %a : tensor<8x8xf32>
  %1 = stablehlo.add %b, %b : tensor<8xi32>
  return %0, %1 : tensor<8x8xf32>, tensor<8xi32>
}
"""


def _bench(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--quick", *args],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@needs_jax
@needs_suite
def test_quick_gelu_writes_the_table(tmp_path):
    out = tmp_path / "PERFORMANCE.md"
    proc = _bench("--only", "gelu", "--out", str(out))
    assert "check gelu: xlac vs XLA" in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if line.startswith("gelu "))
    assert "FAIL" not in row, proc.stdout
    assert "geometric mean xlac/XLA" in proc.stdout
    text = out.read_text()
    assert "| program | xlac ms | XLA ms |" in text and "| gelu |" in text


@needs_jax
@needs_suite
def test_a_lower_cpu_level_masks_cpuid_for_the_whole_run_or_says_why_not():
    proc = _bench("--only", "gelu", "--cpu", "x86-64-v3")
    row = next(line for line in proc.stdout.splitlines() if line.startswith("gelu "))
    assert "FAIL" not in row, proc.stdout
    if cpu_mask.why_not("x86-64-v3") is None:
        assert "CPUID is masked to x86-64-v3 for the whole run" in proc.stdout
    else:
        assert "CPUID is not masked to x86-64-v3" in proc.stderr


@needs_jax
@needs_suite
def test_extra_program_from_the_command_line(tmp_path):
    path = tmp_path / "tiny.mlir"
    path.write_text(TINY)
    proc = _bench("--only", "tiny", str(path))
    row = next(line for line in proc.stdout.splitlines() if line.startswith("tiny "))
    assert "n/a" in row          # no numpy version of a program from outside the suite
    assert "xlac vs XLA max rel err 0.0e+00" in proc.stdout


@needs_jax
@needs_suite
def test_unknown_program_is_a_clear_error():
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--only", "nope"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "no program named nope" in proc.stderr


@needs_jax
@needs_suite
def test_cuda_target_runs_or_says_why_on_any_machine(tmp_path):
    """With a GPU the row has times; without one every FAIL has a note saying why."""
    out = tmp_path / "bench_cuda.md"
    proc = _bench("--target", "cuda", "--only", "gelu", "--suite", str(SUITE), "--out", str(out))
    text = out.read_text()
    assert text.startswith("## CUDA (") and "| program | xlac ms | XLA ms | XLA host ms |" in text
    row = next(line for line in text.splitlines() if line.startswith("| gelu |"))
    failures = row.count("FAIL [")
    notes = [line for line in text.splitlines() if line.startswith("[")]
    assert len(notes) == failures, proc.stdout
    if failures == 0:                      # a GPU machine: xlac agrees with XLA
        assert "xlac vs XLA max rel err" in proc.stdout and "MISMATCH" not in proc.stdout


def _cuda_report():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import programs
        import report
        from gpu import report as cuda_report
    finally:
        sys.path.remove(str(REPO / "bench"))
    return cuda_report, programs, report


def test_cuda_table_from_fake_timings():
    """Ratios, the memory/compute split and %HBM, without a GPU."""
    cuda_report, programs, report = _cuda_report()
    Result = report.BackendResult
    big = programs.TensorSpec((6_000_000,), "float32")           # 24 MB in, 24 MB out
    copy = programs.Program("copy", Path("copy.mlir"), (big,), (big,), 0, flops=6e6)
    small = programs.TensorSpec((256, 256), "float32")
    matmul = programs.Program("mm", Path("mm.mlir"), (small, small), (small,), 1, flops=3.4e7)
    results = [
        report.ProgramResult(copy, {"xlac": Result(compile_s=1.5, times=[20e-6] * 5, check=0.0),
                                    "XLA": Result(compile_s=0.25, times=[10e-6] * 5),
                                    "XLA host": Result(times=[40e-6] * 5, check=0.0)},
                             flops=6e6),
        report.ProgramResult(matmul, {"xlac": Result(error="xlac run: CudaError: boom"),
                                      "XLA": Result(times=[1e-3] * 5),
                                      "XLA host": Result(times=[2e-3] * 5)}, flops=3.4e7),
    ]
    args = SimpleNamespace(quick=False, warmup=2, pause_ms=20.0, seed=0)
    text = cuda_report.markdown(results, cuda_report.method_lines(args), {"jax": "0.11.2"},
                                "NVIDIA H200", date=datetime.date(2026, 12, 1))
    lines = text.splitlines()
    assert lines[0] == "## CUDA (H200)" and "on 2026-12-01" in text and "- device: NVIDIA H200" in lines
    copy_row = next(line for line in lines if line.startswith("| copy |")).split(" | ")
    # 48e6 bytes in 20 us = 2.4 TB/s = 50% of 4.8 TB/s; XLA's 10 us is 100%
    assert copy_row[4:9] == ["2.00", "0.500", "memory", "50.0%", "100.0%"], copy_row
    assert copy_row[9:12] == ["1.50", "0.25", "0.0e+00"]
    mm_row = next(line for line in lines if line.startswith("| mm |")).split(" | ")
    assert mm_row[1] == "FAIL [1]" and mm_row[6:9] == ["compute", "-", "-"], mm_row
    assert "[1] xlac on mm: xlac run: CudaError: boom" in lines
    assert "geometric mean xlac/XLA: 2.00 (over 1 of 2 programs; wrong outputs left out)" in lines
    assert "geometric mean xlac/XLA host: 0.50 (over 1 of 2 programs; wrong outputs left out)" in lines


def test_cuda_table_lists_each_programs_slowest_gpu_kernels_when_profiled():
    """run.py --target cuda --profile: the three slowest kernels with their share of GPU time."""
    cuda_report, programs, report = _cuda_report()
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import kernels
    finally:
        sys.path.remove(str(REPO / "bench"))
    Result, spec = report.BackendResult, programs.TensorSpec((4,), "float32")
    program = programs.Program("mlp", Path("mlp.mlir"), (spec,), (spec,), 0, flops=1e6)
    profile = kernels.KernelProfile(5, 4, 0.8, [("main_kernel_1", 0.3, 0.5), ("main_kernel", 0.2, 0.3),
                                                ("memcpy device->device 64 B", 0.1, 0.1)])
    results = [report.ProgramResult(program, {"xlac": Result(times=[1e-3] * 3, check=0.0),
                                              "XLA": Result(times=[1e-3] * 3)}, profile=profile)]
    text = cuda_report.text_table(results, kernels=3)
    assert "slowest xlac kernels (exe.profile; share of the program's GPU time" in text
    assert "mlp  5 kernels, 0.8 ms/call profiled" in text
    assert "1. 50.0% 0.3 ms main_kernel_1" in text and "3. 10.0% 0.1 ms memcpy device->device 64 B" in text
    assert "slowest xlac kernels" not in cuda_report.text_table(results)     # not profiled: no list
    args = SimpleNamespace(quick=False, warmup=2, pause_ms=20.0, seed=0, profile=True, profile_s=2.0,
                           traces=None)
    md = cuda_report.markdown(results, cuda_report.method_lines(args), {"jax": "0.11.2"}, "NVIDIA H200",
                              kernels=3)
    assert "## Slowest xlac kernels" in md and "CUDA events around every launch" in md
    assert "| mlp | 5 | 0.8 | 50.0% 0.3 ms main_kernel_1 | 30.0% 0.2 ms main_kernel |" in md


def test_compile_scaling_worker_times_a_cuda_compile_by_phase(tmp_path):
    """compile_scaling.py --target cuda: the worker compiles for cuda (no GPU needed)
    and its stages after the front count as lowering, its PTX as machine code."""
    import compile_scaling
    program = tmp_path / "tiny.mlir"
    program.write_text(TINY)
    worker = REPO / "bench" / "workers" / "compile_scaling_worker.py"
    done = subprocess.run([sys.executable, str(worker), str(program), "1", "cold", str(tmp_path / "cache"),
                           "cuda"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    cold = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"gpu-loops", "kernels", "gpu", "machine code"} <= set(cold["stages"])
    split = compile_scaling.user_phases(cold)
    assert split["lowering"] >= cold["stages"]["gpu"] > 0
    assert split["LLVM codegen"] == cold["stages"]["machine code"] > 0


def test_compile_scaling_second_compile_counts_only_its_own_work(tmp_path):
    """compile_scaling.py's ``second`` column: the worker compiles a warm-up program
    first (into a cache of its own), then times the program; the warm-up's stages and
    its workers' CPU stay out of the result, and its cache is gone."""
    import compile_scaling_tables
    program = tmp_path / "tiny.mlir"
    program.write_text(TINY)
    cache = tmp_path / "cache"
    worker = REPO / "bench" / "workers" / "compile_scaling_worker.py"
    done = subprocess.run([sys.executable, str(worker), str(program), "1", "second", str(cache), "cpu"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    second = json.loads(done.stdout.strip().splitlines()[-1])
    assert second["seconds"] > 0 and second["workers_cpu"] >= 0
    assert {"stablehlo", "machine code"} <= set(second["stages"])
    assert second["stages"]["machine code"] < second["seconds"]       # one compile's, not two
    assert list(cache.iterdir())                                       # the program's entry
    cells = compile_scaling_tables.second_cells({"second": second}, xla=second["seconds"] / 2)
    assert cells[0] == f"{second['seconds']:.2f}" and cells[2] == "2.0"


def test_compile_scaling_byte_compiles_a_tree_before_timing_it(tmp_path):
    """compile_scaling.py byte-compiles each interpreter's xlac first: under
    PYTHONDONTWRITEBYTECODE=1 a checkout without .pyc files would compile its
    sources again in every cold compile it times."""
    import importlib.util
    import os

    import compile_scaling
    package = tmp_path / "some_pkg"
    (package / "inner").mkdir(parents=True)
    for path in (package / "__init__.py", package / "mod.py", package / "inner" / "__init__.py"):
        path.write_text("VALUE = 1\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPYCACHEPREFIX", None)
    compile_scaling.byte_compile(sys.executable, ("some_pkg",), env=env)
    for source in (package / "mod.py", package / "inner" / "__init__.py"):
        assert Path(importlib.util.cache_from_source(str(source))).is_file()
    assert compile_scaling.XLAC_PACKAGES == ("xlac", "xlac.passes", "xlac.dialects")
