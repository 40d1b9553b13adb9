"""The compiling process runs its function passes on MLIR's threads
(``run_passes(threads=True)``): the same module as one thread gives, and no
thread left behind for a fork to trip on (``fork_is_safe``)."""

from __future__ import annotations

import os

import xlac.pipeline.runner as runner_module
from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.mlir import ir
from xlac.options import Options
from xlac.pipeline.pass_manager import run_passes
from xlac.pipeline.runner import StageRunner, core_spare
from xlac.targets import get_target

# kernels of several kinds (a matmul with an epilogue, a row softmax, an
# elementwise chain): several functions once xla-apply-schedules outlines them
PROGRAM = """
func.func @main(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>, %b: tensor<96xf32>) -> (tensor<64x96xf32>, tensor<64x128xf32>) {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x96xf32>) -> tensor<64x96xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<96xf32>) -> tensor<64x96xf32>
  %y = stablehlo.add %d, %bb : tensor<64x96xf32>
  %r = stablehlo.tanh %y : tensor<64x96xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %s = stablehlo.subtract %x, %mb : tensor<64x128xf32>
  %e = stablehlo.exponential %s : tensor<64x128xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %t = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %p = stablehlo.divide %e, %tb : tensor<64x128xf32>
  return %r, %p : tensor<64x96xf32>, tensor<64x128xf32>
}
"""

FUNCTIONS = """
func.func @f(%a: i32) -> i32 { %z = arith.constant 0 : i32
  %s = arith.addi %a, %z : i32
  return %s : i32 }
func.func @g(%a: i32) -> i32 { %z = arith.constant 0 : i32
  %s = arith.addi %a, %z : i32
  return %s : i32 }
func.func @h(%a: i32) -> i32 { %z = arith.constant 0 : i32
  %s = arith.addi %a, %z : i32
  return %s : i32 }
"""


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _stages_text(threads: bool) -> str:
    """PROGRAM through the CPU stages up to the kernels' cut, at x86-64-v3."""
    options = Options.from_env().replace(cpu="x86-64-v3")
    module = parse_module(new_context(), PROGRAM.encode(), "program.mlir")
    for stage in get_target("cpu").pass_stages():
        steps = stage.steps("main", options)
        if stage.name == "llvm":
            steps = steps[:steps.index("xla-outline-kernels") + 1]
        run_passes(module, steps, threads=threads)
    return str(module)


def test_a_threaded_run_leaves_no_thread_behind():
    before = _threads()
    module = parse_module(new_context(), FUNCTIONS.encode(), "functions.mlir")
    run_passes(module, ["func.func(canonicalize)", "func.func(cse)"], threads=True)
    assert _threads() == before
    assert str(module).count("arith.addi") == 0


def test_threaded_function_passes_give_the_same_module_as_one_thread():
    one = _stages_text(threads=False)
    assert "xla_scheduled" in one or one.count("func.func") > 1      # kernels to spread
    assert _stages_text(threads=True) == one
    assert _stages_text(threads=True) == one                          # and every time


def test_the_stage_runner_runs_on_the_threads_where_a_core_is_spare(monkeypatch):
    seen = []
    monkeypatch.setattr(runner_module, "core_spare", lambda: True)

    def run_passes_spy(module, steps, **kwargs):
        seen.append(kwargs.get("threads"))
        return []
    monkeypatch.setattr(runner_module, "run_passes", run_passes_spy)
    with new_context() as ctx, ir.Location.unknown(ctx):
        module = ir.Module.create()
    runner = StageRunner(Options.from_env())
    runner.run(module, "linalg", ["canonicalize"])
    runner.options = Options.from_env().replace(timing=True)       # pass by pass
    runner.run(module, "linalg", ["canonicalize"])
    assert seen == [True, True]


def test_a_core_is_spare_only_below_the_cpus_load(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    for load, spare in [(0.8, True), (1.5, True), (1.7, False), (10.0, False)]:
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert core_spare() is spare
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})         # one CPU: nothing to share
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert core_spare() is False
