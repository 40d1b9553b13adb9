"""xla-loop-annotations-to-llvm: loop annotations where LLVM IR translation reads them."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class LoopAnnotationsToLlvm(ModulePass):
    """Move the `llvm.loop_annotation` that convert-scf-to-cf puts on a
    loop's back edge into the `loop_annotation` of the `llvm.br` or
    `llvm.cond_br` it became (after convert-cf-to-llvm).

    Why: convert-cf-to-llvm keeps the annotation as a discardable attribute
    of the same name, which the translation to LLVM IR ignores: LLVM then
    unrolled loops marked not to be. Under the op's own attribute it becomes
    the loop's `!llvm.loop` metadata.

    Example:
        llvm.br ^bb1(%n : i64) {llvm.loop_annotation = #llvm.loop_annotation<...>}
    becomes
        llvm.br ^bb1(%n : i64) {loop_annotation = #llvm.loop_annotation<...>}
    """

    name = "xla-loop-annotations-to-llvm"
    keeps_ops = True                   # attributes only: the next fix-ups reuse its walk

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name in ("llvm.br", "llvm.cond_br") and "llvm.loop_annotation" in op.attributes:
                op.attributes["loop_annotation"] = op.attributes["llvm.loop_annotation"]
                del op.attributes["llvm.loop_annotation"]
