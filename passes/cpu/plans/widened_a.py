"""A contraction's operand A made by a widening (bf16, f16, f8 activations
summed in f32): which plans take that widening into their k blocks
(matmul_fused.mlir's @xla_widen_a_per_block) instead of a kernel of its own."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.cpu.plans.schedule_plan import Plan
from xlac.record import replace

_WIDENINGS = ("arith.extf", "arith.extsi", "arith.extui", "arith.sitofp", "arith.uitofp")


def is_widening(op: ir.Operation) -> bool:
    """A 2-D generic whose body only widens its one input (a float, or a
    signed or unsigned integer), identity maps."""
    if op.name != "linalg.generic":
        return False
    block = op.regions[0].blocks[0]
    body = [inner.operation for inner in block.operations]
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    identity = str(ir.AffineMap.get_identity(2))
    return len(op.operands) == 2 and len(body) == 2 and body[0].name in _WIDENINGS \
        and list(body[0].operands) == [block.arguments[0]] and all(str(m) == identity for m in maps)


def with_a_widening(op: ir.Operation, plan: Plan) -> Plan:
    """``plan`` with A's widening as its last member where the plan's
    sequence fuses it into its k blocks (@xla_widen_a_per_block) and that
    widens each element of A once, as a kernel of its own does: chunks of
    rows (``cn`` = 0), each one n block wide. A bf16, f16 or f8 A summed in
    f32 is then widened block by block into the chunk's buffer (in cache),
    not written to memory in f32 and read back (issue 39). Chunks of columns
    would each widen all of A again (256 x 512 x 256 at x86-64-v3 in eight
    32-column chunks: 3% more CPU time), and a widening in the micro-kernel,
    at every broadcast of A, costs integer and shuffle ops beside each
    row's FMAs (AVX2: 20% more): those keep A's widening apart
    (docs/PERFORMANCE.md)."""
    if plan.sequence not in WIDENED_A_SEQUENCES or not plan.members:
        return plan
    cm, cn, bn = plan.params[:3]
    if cn or bn != ir.ShapedType(op.results[0].type).shape[-1]:
        return plan
    producer = op.operands[0].owner
    if not hasattr(producer, "name") or not is_widening(producer):
        return plan
    uses = list(producer.results[0].uses)
    if len(uses) != 1 or uses[0].owner != op:
        return plan
    return replace(plan, members=(*plan.members, producer))


# the sequences that take A's widening after B's producer (matmul_fused.mlir)
WIDENED_A_SEQUENCES = ("xla_matmul_fused_b",)
