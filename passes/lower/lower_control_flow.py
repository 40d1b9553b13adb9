"""xla-lower-control-flow: StableHLO while/if/case as scf ops on tensors."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops

_LOWERINGS = ("stablehlo.while", "stablehlo.if", "stablehlo.case")


class LowerControlFlow(ModulePass):
    """Rewrite `stablehlo.while/if/case` into `scf.while/if/index_switch`.

    Why: upstream stablehlo-legalize-to-linalg has no pattern for StableHLO's
    control flow, but it does convert the StableHLO ops nested inside scf
    regions. So the regions move over unchanged; only their terminators and
    the 0-d tensor predicate/index (read with tensor.extract) change. Result
    types stay as they are (stablehlo-convert-to-signless later rewrites
    unsigned types of the scf ops too). `case` maps branch k to `case k` and
    its last branch to `default`, so an out-of-range index (negative or too
    large) runs the last branch, as the spec says. Example:

        %r = stablehlo.while(%i = %c0) : tensor<i64> cond { ... } do { ... }
      becomes
        %r = scf.while (%i = %c0) : (tensor<i64>) -> tensor<i64> { ... }
    """

    name = "xla-lower-control-flow"

    acts_on = frozenset(_LOWERINGS)

    def run(self, module: ir.Operation) -> None:
        # Inner ops first, so each lowering sees regions free of the others.
        ops = [op for op in reversed(module_ops(module)) if op.name in _LOWERINGS]
        for op in ops:
            _check_types(op)
        for op in ops:
            new_op = _lower(op)
            for old, new in zip(op.results, new_op.results):
                old.replace_all_uses_with(new)
            op.erase()


def _lower(op: ir.Operation) -> ir.Operation:
    with ir.InsertionPoint(op), op.location:
        if op.name == "stablehlo.while":
            return _lower_while(op)
        if op.name == "stablehlo.if":
            return _lower_if(op)
        return _lower_case(op)


def _check_types(op: ir.Operation) -> None:
    for value in list(op.operands) + list(op.results):
        if not isinstance(value.type, ir.RankedTensorType):
            raise PassFailure(op.location,
                              f"'{op.name}' with a value of type {value.type} cannot be lowered: "
                              "only ranked tensors are supported (tokens are not)")


def _lower_while(op: ir.Operation) -> ir.Operation:
    new_op = _create("scf.while", op, operands=list(op.operands), regions=2)
    cond, body = _move_blocks(op, new_op)
    predicate = _scalar(_terminator(cond).operands[0], _terminator(cond))
    _replace_terminator(cond, "scf.condition", [predicate] + list(cond.arguments))
    _replace_terminator(body, "scf.yield", list(_terminator(body).operands))
    return new_op


def _lower_if(op: ir.Operation) -> ir.Operation:
    predicate = _scalar(op.operands[0], op)
    new_op = _create("scf.if", op, operands=[predicate], regions=2)
    for block in _move_blocks(op, new_op):
        _replace_terminator(block, "scf.yield", list(_terminator(block).operands))
    return new_op


def _lower_case(op: ir.Operation) -> ir.Operation:
    index = _scalar(op.operands[0], op)
    index = ir.Operation.create("arith.index_cast", results=[ir.IndexType.get()],
                                operands=[index]).result
    branches = len(op.regions)
    cases = ir.DenseI64ArrayAttr.get(list(range(branches - 1)))
    new_op = _create("scf.index_switch", op, operands=[index], regions=branches,
                     attributes={"cases": cases})
    # scf.index_switch keeps its default region first: the last branch goes
    # there, branch k becomes region k + 1 (`case k`).
    for branch in range(branches):
        target = 0 if branch == branches - 1 else branch + 1
        block = op.regions[branch].blocks[0]
        block.append_to(new_op.regions[target])
        _replace_terminator(block, "scf.yield", list(_terminator(block).operands))
    return new_op


def _create(name: str, op: ir.Operation, operands, regions: int,
            attributes: dict | None = None) -> ir.Operation:
    return ir.Operation.create(name, results=[r.type for r in op.results],
                               operands=operands, attributes=attributes or {},
                               regions=regions)


def _move_blocks(source: ir.Operation, target: ir.Operation) -> list[ir.Block]:
    blocks = [region.blocks[0] for region in source.regions]
    for block, region in zip(blocks, target.regions):
        block.append_to(region)
    return blocks


def _terminator(block: ir.Block) -> ir.Operation:
    return list(block.operations)[-1].operation


def _scalar(value: ir.Value, before: ir.Operation) -> ir.Value:
    """The element of a 0-d tensor, read just before ``before``."""
    element = ir.RankedTensorType(value.type).element_type
    return ir.Operation.create("tensor.extract", results=[element], operands=[value],
                               ip=ir.InsertionPoint(before), loc=before.location).result


def _replace_terminator(block: ir.Block, name: str, operands: list[ir.Value]) -> None:
    old = _terminator(block)
    ir.Operation.create(name, operands=operands, ip=ir.InsertionPoint(old), loc=old.location)
    old.erase()
