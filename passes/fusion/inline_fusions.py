"""xla-inline-fusions: put the ops of each ``xla.fusion`` back in line."""

from __future__ import annotations

from xlac.dialects.xla import FUSION, fusion_body, fusion_kind, verify_fusion
from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops

GROUP_ATTR = "xla.fusion_group"
KIND_ATTR = "xla.fusion_kind"


class InlineFusions(ModulePass):
    """Replace each xla.fusion by its body, tagging the ops with their kernel.

    Why: the lowering to linalg (upstream stablehlo-legalize-to-linalg and
    xlac's own passes) works on plain StableHLO ops. The grouping survives
    as attributes, so code generation can tile and fuse per kernel: every op
    of the N-th fusion (module order) gets `xla.fusion_group = N` and
    `xla.fusion_kind = "loop"|"input"|"output"|"multi_output"`. Example:

        %r = "xla.fusion"(%x) ({ ^bb0(%a): %e = stablehlo.exponential %a ...
                                 "xla.yield"(%e) }) {kind = "loop"}
      becomes
        %e = stablehlo.exponential %x {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"}
    """

    name = "xla-inline-fusions"

    def run(self, module: ir.Operation) -> None:
        fusions = [op for op in module_ops(module) if op.name == FUSION]
        problems = [(op, verify_fusion(op)) for op in fusions]
        for op, problem in problems:
            if problem:
                op.location.emit_error(f"'xla.fusion' op {problem}")
        if any(problem for _, problem in problems):
            raise PassFailure()
        for number, fusion in enumerate(fusions):
            _inline(fusion, number)


def _inline(fusion: ir.Operation, number: int) -> None:
    body = fusion_body(fusion)
    group = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), number)
    kind = ir.StringAttr.get(fusion_kind(fusion))
    for argument, value in zip(body.arguments, fusion.operands):
        argument.replace_all_uses_with(value)
    ops = [op.operation for op in body.operations]
    terminator = ops.pop()
    for op in ops:
        op.move_before(fusion)
        op.attributes[GROUP_ATTR] = group
        op.attributes[KIND_ATTR] = kind
    for result, value in zip(fusion.results, terminator.operands):
        result.replace_all_uses_with(value)
    fusion.erase()
