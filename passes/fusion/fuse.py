"""xla-fuse: group StableHLO ops into ``xla.fusion`` kernels, as XLA does."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions
from xlac.passes.fusion.build import materialize
from xlac.passes.fusion.op_graph import build_graph
from xlac.passes.fusion.plan import plan_block
from xlac.passes.remarks import emit_remarks
from xlac.record import record

_CONTROL_FLOW = ("stablehlo.while", "stablehlo.if", "stablehlo.case")


@record
class Fuse(ModulePass):
    """Group producer->consumer ops into xla.fusion kernels (loop, input, output, multi_output).

    Why: each unfused op is a full pass over memory; a kernel reads its
    inputs once and keeps intermediates in registers. XLA's rules (see
    fusion_plan.py): elementwise chains, broadcasts and reshapes fuse into
    their consumers (loop), reductions pull in their producers (input),
    dot/convolution take their elementwise epilogue (output), kernels
    reading the same large input merge (multi_output), and with
    producer-kernels (the CPU's pipelines) an elementwise kernel joins the
    elementwise kernel that reads it over the same loop. Cheap producers are
    copied into each consumer; expensive ones are not. Each fusion carries a
    FusedLoc of its ops. With remarks=true (the pipelines set it from
    XLAC_FUSION_REMARKS=1 or xla-opt --xla-fusion-remarks) every rejected candidate gets a remark
    saying why. xla-inline-fusions undoes the grouping. Upstream has no
    fusion on StableHLO (linalg-fuse-elementwise-ops comes after lowering
    and fuses neither reductions nor dots), hence Python. Example:

        %s = stablehlo.add %x, %y : tensor<8xf32>
        %e = stablehlo.exponential %s : tensor<8xf32>
      becomes
        %e = "xla.fusion"(%x, %y) ({
        ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>):
          %s = stablehlo.add %a, %b : tensor<8xf32>
          %e = stablehlo.exponential %s : tensor<8xf32>
          "xla.yield"(%e) : (tensor<8xf32>) -> ()
        }) {kind = "loop"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    """

    name = "xla-fuse"
    remarks: bool = False
    max_ops: int = 64            # largest kernel, in ops (copies included; op_weight: cheap ops count 1/4)
    producer_kernels: bool = True   # elementwise kernels join their elementwise readers; siblings of any element types

    def run(self, module: ir.Operation) -> None:
        plans, rejections = [], []
        for block in _fusion_blocks(module):
            in_loop = block.owner is not None and block.owner.name == "stablehlo.while"
            plan, rejected = plan_block(build_graph(block), self.max_ops, self.producer_kernels, in_loop)
            plans.append(plan)
            rejections += rejected
        if self.remarks:
            emit_remarks(module, [(r.op, r.message) for r in rejections])
        for plan in plans:
            if plan.groups or plan.erase:
                materialize(plan)


def _fusion_blocks(module: ir.Operation) -> list[ir.Block]:
    """Function bodies, and the bodies of control flow inside them."""
    found: list[ir.Block] = []

    def visit(block: ir.Block) -> None:
        found.append(block)
        for op in block.operations:
            if op.operation.name in _CONTROL_FLOW:
                for region in op.operation.regions:
                    for inner in region.blocks:
                        visit(inner)

    for func in functions(module):
        for block in func.regions[0].blocks:
            visit(block)
    return found
