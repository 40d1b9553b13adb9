"""``@xla_cleanup`` runs once per compile, on the scheduled module whole, and
does to each function what it did given that function alone.

Why it matters: given each function, ``apply_patterns`` built its pattern
sets once per function (most of the cleanup's time); given the module, once.
The code must not change for it.
"""

from __future__ import annotations

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.mlir import dialect, ir
from xlac.passes.base import functions
from xlac.passes.cpu import apply_schedules
from xlac.passes.cpu.plans import schedule_script
from xlac.pipeline import pipelines
from xlac.pipeline.pass_manager import run_passes

_T = "tensor<32x64xf32>"
_PROGRAM = f"""
func.func public @main(%x: {_T}, %w: tensor<64x64xf32>, %v: tensor<64x64xf32>) -> tensor<32xf32> {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : ({_T}, tensor<64x64xf32>) -> {_T}
  %e = stablehlo.exponential %h : {_T}
  %g = stablehlo.dot_general %e, %v, contracting_dims = [1] x [0] : ({_T}, tensor<64x64xf32>) -> {_T}
  %s = stablehlo.reduce(%g init: %zero) applies stablehlo.add across dimensions = [1]
    : ({_T}, tensor<f32>) -> tensor<32xf32>
  return %s : tensor<32xf32>
}}
"""


def _scheduled_before_cleanup(monkeypatch) -> tuple[list[str], int]:
    """The scheduled module each committed cleanup was given (as text), and
    how many interpreter runs the schedules took."""
    given, runs = [], [0]
    real_clean_up, real_interpret = apply_schedules.clean_up, apply_schedules.interpret

    def clean_up(module):
        given.append(str(module))
        return real_clean_up(module)

    def interpret(module):
        runs[0] += 1
        return real_interpret(module)

    monkeypatch.setattr(apply_schedules, "clean_up", clean_up)
    monkeypatch.setattr(apply_schedules, "interpret", interpret)
    module = parse_module(new_context(), _PROGRAM.encode(), "program.mlir")
    run_passes(module, pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg()
               + ["xla-apply-schedules{threads=2 vector-bytes=32 share-kernels=false}"])
    return given, runs[0]


def _cleaned_function_by_function(text: str) -> str:
    """The cleanup given each function alone, as each kernel's script did before."""
    module = ir.Module.parse(text, new_context())
    with module.context, ir.Location.unknown():
        body = module.body
        for op in list(body.operations):
            if op.operation.name.startswith("transform."):
                op.operation.erase()
        del module.operation.attributes["transform.with_named_sequence"]
        script = ir.Module.parse(schedule_script.CLEANUP.read_text())
        interpreter = dialect("transform.interpreter")
        options = interpreter.TransformOptions()
        options.expensive_checks = False
        for func in functions(module.operation):
            interpreter.apply_named_sequence(func, script.body.operations[0], script, options)
    return str(module)


def _cleaned_whole(text: str) -> str:
    module = ir.Module.parse(text, new_context())
    assert schedule_script.clean_up(module.operation) == ""
    return str(module)


def test_cleanup_runs_once_per_compile(monkeypatch):
    given, _ = _scheduled_before_cleanup(monkeypatch)
    assert len(given) == 1
    kernels = given[0].count("func.func private @xla_scheduled")
    assert kernels >= 3         # two matmuls and a row sum at least, each a function


def test_whole_module_cleanup_is_the_per_function_one(monkeypatch):
    (text,), _ = _scheduled_before_cleanup(monkeypatch)
    whole = _cleaned_whole(text)
    assert whole == _cleaned_function_by_function(text)
    assert "transform." not in whole


def test_cleanup_still_hoists_the_accumulators(monkeypatch):
    """What the cleanup is for: a matmul's and a row sum's accumulator carried
    in vector registers by the loops (hoisted), its masked and sliced reads
    folded away."""
    (text,), _ = _scheduled_before_cleanup(monkeypatch)
    whole = _cleaned_whole(text)
    stripped = ir.Module.parse(text, new_context())
    for op in list(stripped.body.operations):
        if op.operation.name.startswith("transform."):
            op.operation.erase()
    before = str(stripped)
    assert "-> (vector<" not in before and "-> (vector<" in whole
    assert whole.count("tensor.extract_slice") < before.count("tensor.extract_slice")


def test_a_failing_cleanup_says_why(monkeypatch):
    """A cleanup that fails is a schedule that did not apply: its reason, not a traceback."""
    failing = schedule_script._cleanup_text().replace(
        "%funcs = transform.structured.match ops{[\"func.func\"]} in %root\n"
        "      : (!transform.any_op) -> !transform.any_op",
        "%found = transform.structured.match ops{[\"func.func\"]} in %root\n"
        "      : (!transform.any_op) -> !transform.any_op\n"
        "    %funcs, %none = transform.split_handle %found\n"
        "      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)")
    assert failing != schedule_script._cleanup_text()
    monkeypatch.setattr(schedule_script, "_cleanup_text", lambda: failing)
    module = ir.Module.parse("func.func @f() { return }", new_context())
    assert "expected to contain 2 payloads" in schedule_script.clean_up(module.operation)
