"""XLAC_DUMP_TO, the fusion graph, per-pass times, reproducers, disabling
passes, and the large-constant warning."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlac
from conftest import MASKED_ROW_MAX, REPO
from xlac.pipeline.text import pass_names, without_passes
from xlac.targets import get_target

BIN = Path(sys.executable).parent
SOFTMAX = """module @softmax {
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]
      : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %d = stablehlo.subtract %x, %mb : tensor<4x8xf32>
  %e = stablehlo.exponential %d : tensor<4x8xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
      : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %r = stablehlo.divide %e, %sb : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
}
"""


@pytest.fixture
def dump_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XLAC_DUMP_TO", str(tmp_path / "dump"))
    return tmp_path / "dump"


def test_dump_has_input_pipeline_and_ir_after_every_pass(dump_dir):
    xlac.compile(SOFTMAX)
    [module_dir] = dump_dir.iterdir()
    assert module_dir.name == "0000_softmax"
    assert (module_dir / "input.mlir").read_text() == SOFTMAX
    pipeline = (module_dir / "pipeline.txt").read_text().strip()
    steps = get_target("cpu").pipeline("main", xlac.Options.from_env())
    assert pipeline == "builtin.module(" + ",".join(steps) + ")"
    numbered = sorted(p.name for p in module_dir.glob("[0-9][0-9][0-9]_*.mlir"))
    assert len(numbered) == len(steps)
    assert numbered[0] == "001_xla-select-entry.mlir"
    assert "llvm.func" in (module_dir / numbered[-1]).read_text()
    assert "Total" in (module_dir / "timing.txt").read_text()


def test_each_compile_gets_its_own_numbered_directory(dump_dir):
    xlac.compile(SOFTMAX)
    xlac.compile(SOFTMAX.replace("@softmax", "@again"))
    assert sorted(p.name for p in dump_dir.iterdir()) == ["0000_softmax", "0001_again"]


def test_fusion_graph_is_the_kernels_for_a_graph_viewer(dump_dir):
    """Model Explorer's graph-collection JSON (and Graphviz DOT): every op a node,
    each kernel a group named and numbered as in fusion_report()."""
    exe = xlac.compile(SOFTMAX)
    module_dir = dump_dir / "0000_softmax"
    report = exe.fusion_report()
    fusions = re.findall(r"^fusion (\d+) +(\w+)", report, re.MULTILINE)
    collection = json.loads((module_dir / "fusion_graph.json").read_text())
    graph = collection["graphs"][0]
    ids = {node["id"] for node in graph["nodes"]}
    groups = {node["namespace"] for node in graph["nodes"] if node["namespace"]}
    assert groups == {f"fusion {n} ({kind})" for n, kind in fusions}
    assert set(graph["groupNodeAttributes"]) == groups
    assert all(edge["sourceNodeId"] in ids for node in graph["nodes"]
               for edge in node["incomingEdges"])
    labels = [node["label"] for node in graph["nodes"]]
    assert labels.count("argument 0") == 1 and labels.count("result 0") == 1
    assert "exponential" in labels
    flops = json.loads((module_dir / "fusion_graph.flops.json").read_text())
    assert set(flops[graph["id"]]["results"]) <= ids
    dot = (module_dir / "fusion_graph.dot").read_text()
    assert dot.startswith("digraph") and dot.count("subgraph") == len(groups)
    page = (module_dir / "fusion_graph.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "model-explorer fusion_graph.json" in page
    kernels = len(re.findall(r"^(fusion|op) ", report, re.MULTILINE))
    assert page.count("<tr data-kind=") == kernels
    assert "4x8xf32" in page and "FLOP" in page and "exponential" in page


def test_timing_on_request(monkeypatch, capfd):
    monkeypatch.setenv("XLAC_TIMING", "1")
    xlac.compile(SOFTMAX)
    err = capfd.readouterr().err
    assert "xlac compile time report" in err
    for name in ("xla-select-entry", "one-shot-bufferize", "llvm-jit", "Total", "linalg"):
        assert name in err


def test_failure_writes_a_reproducer_that_xla_opt_replays(tmp_path):
    with pytest.raises(xlac.CompileError) as info:
        xlac.compile(SOFTMAX, disable_passes=("stablehlo-legalize-to-linalg",))
    match = re.search(r"reproducer written to (\S+):", str(info.value))
    assert match, str(info.value)
    where = Path(match.group(1))
    assert (where / "input.mlir").read_text() == SOFTMAX
    pipeline = (where / "pipeline.txt").read_text().strip()
    assert "stablehlo-legalize-to-linalg" not in pipeline
    done = subprocess.run([str(BIN / "xla-opt"), str(where / "input.mlir"),
                           f"--pass-pipeline={pipeline}"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "xla-verify-lowered" not in done.stdout
    assert "stablehlo" in done.stderr


def test_reproducer_in_the_dump_names_the_failing_pass(dump_dir):
    with pytest.raises(xlac.CompileError):
        xlac.compile(SOFTMAX, disable_passes=("stablehlo-legalize-to-linalg",))
    reproducer = dump_dir / "0000_softmax" / "reproducer"
    assert (reproducer / "failing_pass.txt").read_text().strip() == \
        "builtin.module(xla-verify-lowered)"
    assert "stablehlo.exponential" in (reproducer / "before_failing_pass.mlir").read_text()
    assert "xla-verify-lowered (failed)" in (reproducer.parent / "timing.txt").read_text()


def test_disabled_passes_come_from_the_environment_too(dump_dir, monkeypatch):
    monkeypatch.setenv("XLAC_DISABLE_PASSES", "cse,linalg-fuse-elementwise-ops")
    exe = xlac.compile(SOFTMAX)
    pipeline = (dump_dir / "0000_softmax" / "pipeline.txt").read_text()
    assert "cse" not in pass_names([pipeline.strip()])
    assert "linalg-fuse-elementwise-ops" not in pipeline
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(exe(x), e / e.sum(1, keepdims=True), rtol=1e-5)


def test_a_misspelt_pass_to_disable_is_an_error():
    with pytest.raises(xlac.CompileError, match="cannot disable canonicalise: not in the pipeline"):
        xlac.compile(SOFTMAX, disable_passes=("canonicalise",))


def test_without_passes_reaches_into_op_anchors():
    steps = ["func.func(cse,canonicalize)", "func.func(cse)", "inline"]
    assert without_passes(steps, ("cse",)) == ["func.func(canonicalize)", "inline"]


def test_large_constants_are_reported_once(monkeypatch):
    monkeypatch.setenv("XLAC_LARGE_CONSTANT_BYTES", "64")
    values = ", ".join(str(float(i)) for i in range(32))
    program = ("func.func @main(%x: tensor<32xf32>) -> tensor<32xf32> {\n"
               f"  %c = stablehlo.constant dense<[{values}]> : tensor<32xf32>\n"
               "  %s = stablehlo.constant dense<1.0> : tensor<64xf32>\n"
               "  %0 = stablehlo.add %x, %c : tensor<32xf32>\n"
               "  return %0 : tensor<32xf32>\n}")
    with pytest.warns(xlac.LargeConstantWarning) as caught:
        xlac.compile(program, cache=False)
    [warning] = caught
    assert "<input>:2:8" in str(warning.message) and "f32[32]" in str(warning.message)
    assert "1 large constant(s)" in str(warning.message)      # the splat is not counted


def test_every_knob_is_documented_from_the_options_record():
    from xlac.options import KNOBS, markdown
    assert (REPO / "docs" / "options.md").read_text() == markdown(), \
        "regenerate: python -m xlac.options > docs/options.md"
    assert all(knob.variable.startswith("XLAC_") for knob in KNOBS)


def test_constants_without_a_python_attribute_class_are_fine(monkeypatch):
    monkeypatch.setenv("XLAC_LARGE_CONSTANT_BYTES", "8")
    program = ("func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {\n"
               "  %c = stablehlo.constant dense<[(1.5, 2.5), (7.5, 5.5)]> : tensor<2xcomplex<f32>>\n"
               "  %0 = stablehlo.add %x, %c : tensor<2xcomplex<f32>>\n"
               "  return %0 : tensor<2xcomplex<f32>>\n}")
    x = np.array([1 + 1j, 2 - 1j], np.complex64)
    with pytest.warns(xlac.LargeConstantWarning, match=r"c64\[2\]"):
        exe = xlac.compile(program, cache=False)
    np.testing.assert_allclose(exe(x), x + np.array([1.5 + 2.5j, 7.5 + 5.5j], np.complex64))


def test_trace_has_a_span_per_pass_and_per_stage(tmp_path, monkeypatch):
    import json
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("XLAC_TRACE_TO", str(trace))
    xlac.compile(SOFTMAX)
    events = json.loads(trace.read_text())["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    assert {e["name"] for e in spans if e["cat"] == "stage"} >= {"stablehlo", "fused", "linalg",
                                                                  "bufferized", "llvm"}
    assert any(e["name"].startswith("xla-fuse") for e in spans)
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans)


def test_ops_left_as_scalar_loops_are_reported_not_silent(dump_dir):
    """No silent fallback: an op no vector schedule takes (it reads i1, with
    the pass that moves i1 vectors as bytes off) is a remark, in the report
    and the dump."""
    exe = xlac.compile(MASKED_ROW_MAX, disable_passes=("xla-i1-memory-as-i8",))
    report = exe.fusion_report()
    assert "not scheduled:" in report and "no vector schedule for linalg.generic" in report
    assert "scalar loops" in report
    [module_dir] = dump_dir.iterdir()
    assert "xla-apply-schedules" in (module_dir / "remarks.txt").read_text()


def test_graph_and_report_number_kernels_alike_inside_loops(tmp_path):
    program = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c3 = stablehlo.constant dense<30> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %e = stablehlo.exponential %a : tensor<4xf32>
  %f = stablehlo.add %e, %a : tensor<4xf32>
  %r:2 = stablehlo.while(%i = %c0, %x = %f) : tensor<i32>, tensor<4xf32>
   cond {
    %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n = stablehlo.add %i, %c1 : tensor<i32>
    %y = stablehlo.tanh %x : tensor<4xf32>
    %z = stablehlo.multiply %y, %x : tensor<4xf32>
    stablehlo.return %n, %z : tensor<i32>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}"""
    exe = xlac.compile(program)
    written = exe.fusion_graph(tmp_path / "graph.json")
    assert [p.name for p in written] == ["graph.json", "graph.flops.json", "graph.bytes.json",
                                         "graph.dot", "graph.html"]
    report = exe.fusion_report()
    fusions = {f"fusion {n} ({kind})" for n, kind in
               re.findall(r"^fusion (\d+) +(\w+)", report, re.MULTILINE)}
    graph = json.loads(written[0].read_text())["graphs"][0]
    groups = {node["namespace"].rsplit("/", 1)[-1] for node in graph["nodes"] if node["namespace"]}
    assert len(fusions) == 2 and fusions <= groups         # one outside the loop, one inside
    assert any(n["namespace"].startswith("while 0") for n in graph["nodes"])
    assert xlac.deserialize(exe.serialize()).fusion_graph(tmp_path / "none.json") is None
