"""The ``xla`` dialect: ``xla.fusion`` (one kernel's ops) and ``xla.yield``.

IRDL (``torch_mlir.dialects.ext``) cannot define these ops: it binds each
operand constraint to one type per op, so a variadic operand list must be
all one type, and a kernel's inputs and outputs are not (README.md has the
details). The ops are therefore unregistered ops in generic form, allowed by
``register_xla_dialect``; ``verify_fusion`` checks what a registered op's
verifier would.

    %r:2 = "xla.fusion"(%x, %b) ({
    ^bb0(%x_in: tensor<8x4xf32>, %b_in: tensor<8x4xf32>):
      %s = stablehlo.add %x_in, %b_in : tensor<8x4xf32>
      %e = stablehlo.exponential %s : tensor<8x4xf32>
      "xla.yield"(%s, %e) : (tensor<8x4xf32>, tensor<8x4xf32>) -> ()
    }) {kind = "multi_output"} : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
"""

from __future__ import annotations

from collections.abc import Sequence

from xlac.mlir import ir

FUSION = "xla.fusion"
YIELD = "xla.yield"
KINDS = ("loop", "input", "output", "multi_output")


def register_xla_dialect(ctx: ir.Context) -> None:
    """Let ``ctx`` hold ``xla.*`` ops.

    Unregistered ops need ``allow_unregistered_dialects``. It admits ops of
    any unknown dialect, but not unknown ops of a known one (a misspelt
    ``stablehlo.plus`` is still an error).
    """
    ctx.allow_unregistered_dialects = True


def create_fusion(inputs: Sequence[ir.Value], result_types: Sequence[ir.Type], kind: str,
                  loc: ir.Location, ip: ir.InsertionPoint) -> tuple[ir.Operation, ir.Block]:
    """An empty ``xla.fusion`` and its body block (one argument per input)."""
    op = ir.Operation.create(FUSION, results=list(result_types), operands=list(inputs),
                             attributes={"kind": ir.StringAttr.get(kind)}, regions=1,
                             loc=loc, ip=ip)
    block = op.regions[0].blocks.append(*[value.type for value in inputs],
                                        arg_locs=[value.location for value in inputs])
    return op, block


def create_yield(values: Sequence[ir.Value], block: ir.Block, loc: ir.Location) -> ir.Operation:
    """``xla.yield values`` at the end of ``block``."""
    with ir.InsertionPoint(block):
        return ir.Operation.create(YIELD, operands=list(values), loc=loc)


def fusion_kind(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["kind"]).value


def fusion_body(op: ir.Operation) -> ir.Block:
    return op.regions[0].blocks[0]


def verify_fusion(op: ir.Operation) -> str:
    """What is wrong with an ``xla.fusion`` op, or "" if nothing."""
    kind = op.attributes["kind"] if "kind" in op.attributes else None
    if not isinstance(kind, ir.StringAttr) or kind.value not in KINDS:
        return f"expects a 'kind' attribute, one of {', '.join(KINDS)}"
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return "expects one region with one block"
    body = fusion_body(op)
    if [a.type for a in body.arguments] != [v.type for v in op.operands]:
        return "expects one body argument per operand, of the operand's type"
    ops = list(body.operations)
    if not ops or ops[-1].operation.name != YIELD:
        return "expects its body to end with 'xla.yield'"
    if [v.type for v in ops[-1].operands] != [r.type for r in op.results]:
        return "expects 'xla.yield' operands of the result types"
    if reads_from_above(op):
        return "expects its body to read only its own arguments (the region is isolated)"
    return ""


def reads_from_above(op: ir.Operation) -> bool:
    """True if an op nested in ``op`` reads a value defined outside ``op``."""
    inside: set = set()
    nested: list[ir.Operation] = []

    def visit(inner: ir.Operation):
        inside.add(inner)
        inside.update(block for region in inner.regions for block in region.blocks)
        nested.append(inner)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    for inner in nested[1:]:
        for value in inner.operands:
            owner = value.owner
            if (owner if isinstance(owner, ir.Block) else owner.operation) not in inside:
                return True
    return False
