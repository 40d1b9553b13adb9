"""Moving ops within their block as far as their operands and users allow:
the scheduling half of xla-overlap-collectives."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ancestor_in_block

# Ops that only compute on tensors: moving them changes when, not what, they compute.
_PURE_PREFIXES = ("linalg.", "tensor.", "arith.", "math.")


def hoist_after_operands(op: ir.Operation) -> None:
    """Move ``op`` up to right after the last op of its block that defines one
    of its operands (to the block's start if none does)."""
    block = op.block
    order = _positions(block)
    latest = None
    for value in op.operands:
        owner = ancestor_in_block(value.owner, block)
        if owner is not None and (latest is None or order[owner] > order[latest]):
            latest = owner
    if latest is not None:
        op.move_after(latest)
    else:
        op.move_before(list(block.operations)[0].operation)


def sink_to_first_use(op: ir.Operation, also_users: bool = False) -> None:
    """Move ``op`` down to right before the first op of its block that uses it.
    With ``also_users``, first do the same for every op that (transitively) uses
    it and only computes on tensors, the last first, so that they make room."""
    if also_users:
        order = _positions(op.block)
        for user in sorted(_pure_users(op), key=lambda u: -order[u]):
            _sink(user)
    _sink(op)


def _sink(op: ir.Operation) -> None:
    block = op.block
    order = _positions(block)
    users = [ancestor_in_block(use.owner, block) for result in op.results for use in result.uses]
    users = [u for u in users if u is not None]
    if users:
        op.move_before(min(users, key=lambda u: order[u]))


def _pure_users(op: ir.Operation) -> list[ir.Operation]:
    """Ops of ``op``'s block that use it (transitively) and only compute on tensors."""
    block, found, todo = op.block, [], [op]
    while todo:
        for result in todo.pop().results:
            for use in result.uses:
                user = ancestor_in_block(use.owner, block)
                if user is not None and user not in found and _pure(user):
                    found.append(user)
                    todo.append(user)
    return found


def _pure(op: ir.Operation) -> bool:
    if not op.name.startswith(_PURE_PREFIXES):
        return False
    values = list(op.operands) + list(op.results)
    return not any(isinstance(v.type, ir.MemRefType) or str(v.type).startswith("memref")
                   for v in values)


def _positions(block: ir.Block) -> dict:
    return {op.operation: index for index, op in enumerate(block.operations)}
