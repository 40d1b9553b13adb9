"""xla-apply-schedules gives the interpreter only the named sequences its
plans reach (``schedule_script.library_text``), not the whole library.

Why it matters: the script's parse and the interpreter's run grow with the
library (~80 sequences; a transformer uses ~28). The code must not change for
it: a program scheduled with the trimmed library and with the whole one is the
same module.
"""

from __future__ import annotations

import re

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.mlir import ir
from xlac.passes.cpu.plans import schedule_script
from xlac.pipeline import pipelines
from xlac.pipeline.pass_manager import run_passes

_T = "tensor<32x64xf32>"
# a matmul, a softmax-like row group and a transpose: three schedule families
_PROGRAM = f"""
func.func public @main(%x: {_T}, %w: tensor<64x64xf32>) -> ({_T}, tensor<64x32xf32>) {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : ({_T}, tensor<64x64xf32>) -> {_T}
  %e = stablehlo.exponential %h : {_T}
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
    : ({_T}, tensor<f32>) -> tensor<32xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<32xf32>) -> {_T}
  %d = stablehlo.divide %e, %b : {_T}
  %t = stablehlo.transpose %x, dims = [1, 0] : ({_T}) -> tensor<64x32xf32>
  return %d, %t : {_T}, tensor<64x32xf32>
}}
"""
_APPLY = "xla-apply-schedules{threads=2 vector-bytes=32}"


def _whole_library() -> str:
    """The library as every sequence's text, as append_schedules used it before."""
    return "".join(text for text, _ in schedule_script._library().values())


def _scheduled(monkeypatch, whole: bool) -> tuple[str, list[str]]:
    """The program after xla-apply-schedules, and the sequences each script named."""
    asked: list[str] = []
    real = schedule_script.library_text

    def library_text(sequences):
        asked.extend(sequences)
        return _whole_library() if whole else real(asked)

    monkeypatch.setattr(schedule_script, "library_text", library_text)
    module = parse_module(new_context(), _PROGRAM.encode(), "program.mlir")
    run_passes(module, pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg() + [_APPLY])
    return module.operation.get_asm(enable_debug_info=False), asked


def test_trimmed_library_schedules_the_same_code(monkeypatch):
    trimmed, asked = _scheduled(monkeypatch, whole=False)
    whole, _ = _scheduled(monkeypatch, whole=True)
    assert len(set(asked)) >= 3                         # matmul, row group, transpose
    assert "scf.forall" in trimmed and "vector." in trimmed
    assert trimmed == whole


def test_trimmed_library_holds_what_the_plans_reach_and_no_more():
    library = schedule_script._library()
    text = schedule_script.library_text(["xla_matmul"])
    defined = set(re.findall(r"transform\.named_sequence @(\w+)\(", text))
    reached, pending = set(), ["xla_matmul"]
    while pending:
        name = pending.pop()
        if name not in reached:
            reached.add(name)
            pending += library[name][1]
    assert defined == reached
    assert "xla_matmul_chunk" in defined and "xla_fused_rows_2d" not in defined
    assert len(defined) < len(library) // 3


def test_every_sequence_parses_with_what_it_includes():
    """The split of the files into sequences keeps each one whole: each
    parses (and verifies) alone with its includes' closure."""
    library = schedule_script._library()
    assert len(library) > 50 and "xla_cleanup" not in library
    with new_context():
        for name in library:
            text = schedule_script.library_text([name])
            ir.Module.parse(f"{schedule_script._HEADER}\n{text}}}")


def test_the_split_loses_only_comments():
    pieces = _whole_library()
    for path in schedule_script.SCHEDULES.glob("*.mlir"):
        if path == schedule_script.CLEANUP:
            continue
        for line in path.read_text().splitlines():
            code = line.split("//")[0].strip()
            if code and not line.startswith(("module attributes", "}")):   # the file's own module
                assert line.rstrip() in pieces, (path.name, line)

