"""The real-model mode of the benchmark (bench/run.py --models): model discovery, input
recipes, per-kernel profiles and their trace, the tables. Nothing here depends on timing."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import REPO

SHARED_MODELS = REPO.parent / "shared" / "models"

needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                               reason="the benchmark compares with XLA: pip install -e '.[bench]'")
needs_nbody = pytest.mark.skipif(not (SHARED_MODELS / "jax_nbody.mlir").exists(),
                                 reason=f"the shared models are not at {SHARED_MODELS}")

TINY = """\
func.func @main(%w: tensor<4x4xf32>, %s: tensor<f32>, %ids: tensor<4xi64>) -> tensor<4x4xf32> {
  %0 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
  %1 = stablehlo.multiply %w, %0 : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
"""


def _bench_modules():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import kernels
        import models
        import programs
        import report
    finally:
        sys.path.remove(str(REPO / "bench"))
    return SimpleNamespace(kernels=kernels, models=models, programs=programs, report=report)


def test_kernel_names_point_at_the_stablehlo_op():
    kernels = _bench_modules().kernels
    lines = ["func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {",
             "  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f] : "
             "(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>",
             "  %1 = stablehlo.add %0, %0 : tensor<2x3xf32>"]
    assert kernels.readable("<input>:2:8 omp.parallel", lines) == \
        "L2 stablehlo.convolution -> 2x3xf32 [omp.parallel]"
    assert kernels.readable("<input>:3:8 linalg.generic", lines) == "L3 stablehlo.add -> 2x3xf32 [linalg.generic]"
    assert kernels.readable("<input>:1:1 memref.copy", lines) == "L1 func.func [memref.copy]"
    assert kernels.readable("<input>:99:1 memref.copy", lines) == "<input>:99:1 memref.copy"
    assert kernels.readable("fused_7", lines) == "fused_7"


def test_summary_and_trace_from_a_profile(tmp_path):
    kernels = _bench_modules().kernels
    names = ["<input>:2:8 omp.parallel", "<input>:3:8 linalg.generic"]
    events = [(0, 0, 3_000_000), (1, 3_000_000, 4_000_000), (0, 5_000_000, 8_000_000)]
    fake = SimpleNamespace(runs=2, wall_ms=4.5, kernels=lambda: [
        SimpleNamespace(name=names[0], calls=2, total_ms=6.0, share=6 / 7),
        SimpleNamespace(name=names[1], calls=1, total_ms=1.0, share=1 / 7)],
        chrome_trace=lambda: {"traceEvents": [
            {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "xlac kernels"}},
            *[{"name": names[k], "ph": "X", "pid": 1, "tid": 0, "ts": s / 1e3, "dur": (e - s) / 1e3}
              for k, s, e in events]]})
    source = "func.func @main() {\n  %0 = stablehlo.dot_general %a, %b : tensor<8xf32>\n  %1 = stablehlo.tanh %0 : tensor<8xf32>\n"
    trace = tmp_path / "p.trace.json"
    summary = kernels.summarize(fake, source, 1, str(trace), 0.5, title="xlac: p")
    assert summary.kernels == 2 and summary.runs == 2 and summary.trace == str(trace)
    assert summary.top == [("L2 stablehlo.dot_general -> 8xf32 [omp.parallel]", 3.0, 6 / 7)]
    written = json.loads(trace.read_text())["traceEvents"]
    assert written[0] == {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "xlac: p"}}
    spans = [e for e in written if e["ph"] == "X"]
    assert [e["name"] for e in spans][:2] == ["L2 stablehlo.dot_general -> 8xf32 [omp.parallel]",
                                              "L3 stablehlo.tanh -> 8xf32 [linalg.generic]"]
    assert spans[0]["args"] == {"kernel": names[0]}
    assert kernels.cell(summary.top[0]) == "85.7% 3 ms L2 stablehlo.dot_general -> 8xf32 [omp.parallel]"


@needs_jax
def test_exported_models_are_found_with_their_inputs(tmp_path):
    m = _bench_modules()
    (tmp_path / "tiny_model.mlir").write_text(TINY)
    arrays = [np.ones((4, 4), np.float32), np.float32(2.0), np.arange(4, dtype=np.int64)]
    np.savez(tmp_path / "tiny_model.inputs.npz", **{f"arg{i:03d}": a for i, a in enumerate(arrays)})
    (tmp_path / "tiny_model.json").write_text(json.dumps({"description": "a tiny model"}))
    (tmp_path / "no_inputs.mlir").write_text(TINY)          # no .inputs.npz: not a model
    found, notes = m.models.model_programs(tmp_path, shared=tmp_path / "absent")
    assert [p.name for p in found] == ["tiny_model"] and "shared models are not at" in notes[0]
    program = found[0]
    assert program.group == "model" and program.description == "a tiny model"
    got = m.programs.make_inputs(program, seed=3)
    assert [a.shape for a in got] == [(4, 4), (), (4,)] and got[2].dtype == np.int64
    empty, notes = m.models.model_programs(tmp_path / "none", shared=tmp_path / "absent")
    assert not empty and any("bench/export_models.py" in n for n in notes)


def test_geometric_means_per_group_and_the_kernel_table():
    m = _bench_modules()
    Result, spec = m.report.BackendResult, m.programs.TensorSpec((4,), "float32")

    def program(name, group, xlac_ms, profile=None):
        p = m.programs.Program(name, Path(f"{name}.mlir"), (spec,), (spec,), 0, 1e6, group=group,
                               description=f"the {name} model" if group == "model" else "")
        return m.report.ProgramResult(p, {"xlac": Result(times=[xlac_ms / 1e3] * 3, check=0.0),
                                          "XLA": Result(times=[1e-3] * 3)}, profile=profile)

    profile = m.kernels.KernelProfile(12, 3, 2.5, [("L7 stablehlo.dot_general [omp.parallel]", 1.5, 0.6)],
                                      trace="/tmp/traces/big.trace.json")
    results = [program("gelu", "suite", 2.0), program("big", "model", 4.0, profile),
               program("bigger", "model", 16.0)]
    results[2].profile_error = "xlac profile: boom"
    text = m.report.text_table(results, kernels=3)
    assert "geometric mean xlac/XLA, bench programs: 2.00 (over 1 of 1" in text
    assert "geometric mean xlac/XLA, real models: 8.00 (over 2 of 2" in text
    assert "big     12 kernels, 2.5 ms/call profiled" in text
    assert "1. 60.0% 1.5 ms L7 stablehlo.dot_general [omp.parallel]" in text
    assert "bigger  profile failed: xlac profile: boom" in text
    md = m.report.markdown(results, ["method"], {"jax": "0.10.2"}, kernels=3)
    assert "| big | 12 | 2.5 | 60.0% 1.5 ms L7 stablehlo.dot_general [omp.parallel] | - | - | `big.trace.json` |" in md
    assert "## Slowest xlac kernels" in md and "| bigger | - | - | profile failed" in md
    assert "- `big`: the big model" in md and "- `gelu`" not in md


@needs_jax
@needs_nbody
def test_quick_models_run_profiles_and_writes_a_trace(tmp_path):
    """run.py --models --quick on the smallest shared model: checked, profiled, traced."""
    out, traces = tmp_path / "models.md", tmp_path / "traces"
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--quick", "--models",
                           "--only", "jax_nbody", "--traces", str(traces), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "check jax_nbody: xlac vs XLA max rel err" in proc.stdout and "MISMATCH" not in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if line.startswith("jax_nbody "))
    assert "FAIL" not in row, proc.stdout
    assert "slowest xlac kernels" in proc.stdout and "1. " in proc.stdout
    trace = json.loads((traces / "jax_nbody.trace.json").read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert spans and all(e["dur"] >= 0 for e in spans)
    assert any("stablehlo." in e["name"] for e in spans)
    text = out.read_text()
    assert "## Slowest xlac kernels" in text and "`jax_nbody.trace.json`" in text
