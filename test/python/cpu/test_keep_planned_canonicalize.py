"""xla-apply-schedules canonicalizes only the callers of its kernels once
``@xla_cleanup`` has run on the module (``schedule_functions.canonicalize_callers``).

Why it matters: the cleanup ends with the canonicalization patterns over the
whole module, to a fixed point, and nothing after it touches a kernel; the
whole-module canonicalize that followed walked every kernel again for
nothing (~75% of its 8-12 ms on the transformers). The code must not change
for it: canonicalizing the kernels afterwards finds nothing to do.
"""

from __future__ import annotations

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.mlir import passmanager
from xlac.passes.cpu.plans import schedule_functions
from xlac.pipeline import pipelines
from xlac.pipeline.pass_manager import run_passes

# a caller and a kernel (named as outline_planned names them), each with an
# add of zero that canonicalize folds away
_MODULE = """
func.func private @xla_scheduled_0(%x: i32) -> i32 {
  %zero = arith.constant 0 : i32
  %y = arith.addi %x, %zero : i32
  return %y : i32
}
func.func @main(%x: i32) -> i32 {
  %zero = arith.constant 0 : i32
  %y = arith.addi %x, %zero : i32
  %z = func.call @xla_scheduled_0(%y) : (i32) -> i32
  return %z : i32
}
"""


def _function_texts(cleaned: bool) -> dict[str, str]:
    module = parse_module(new_context(), _MODULE.encode(), "module.mlir")
    schedule_functions.canonicalize_callers(module.operation, cleaned)
    return {op.operation.attributes["sym_name"].value: str(op.operation)
            for op in module.body.operations}


def test_cleaned_module_canonicalizes_only_the_callers():
    texts = _function_texts(cleaned=True)
    assert "arith.addi" not in texts["main"]
    assert "arith.addi" in texts["xla_scheduled_0"]     # left as the cleanup left it


def test_module_not_cleaned_is_canonicalized_whole():
    texts = _function_texts(cleaned=False)
    assert not any("arith.addi" in text for text in texts.values())


_T = "tensor<32x64xf32>"
# a matmul with a bias (an epilogue), a softmax-like row group, a transpose:
# kernels of three schedule families, and a caller that reads a slice
_PROGRAM = f"""
func.func public @main(%x: {_T}, %w: tensor<64x64xf32>, %c: {_T}) -> ({_T}, tensor<64x32xf32>) {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : ({_T}, tensor<64x64xf32>) -> {_T}
  %h = stablehlo.add %m, %c : {_T}
  %e = stablehlo.exponential %h : {_T}
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
    : ({_T}, tensor<f32>) -> tensor<32xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<32xf32>) -> {_T}
  %d = stablehlo.divide %e, %b : {_T}
  %t = stablehlo.transpose %x, dims = [1, 0] : ({_T}) -> tensor<64x32xf32>
  return %d, %t : {_T}, tensor<64x32xf32>
}}
"""


def test_scheduled_kernels_are_at_canonical_form():
    module = parse_module(new_context(), _PROGRAM.encode(), "program.mlir")
    run_passes(module, pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg()
               + ["xla-apply-schedules{threads=2 vector-bytes=32}"])
    scheduled = module.operation.get_asm(enable_debug_info=False)
    assert "xla_scheduled_" in scheduled                # kernels were made and kept
    with module.context:
        passmanager.PassManager.parse("builtin.module(canonicalize)").run(module.operation)
    assert module.operation.get_asm(enable_debug_info=False) == scheduled
