"""Turn a block's fusion plan into ``xla.fusion`` ops, then restore a valid order.

Each kernel is built by cloning its ops into a new fusion body (so an op
copied into several kernels needs no special case); the originals of the
kernel's own ops are then erased, readers outside switched to the fusion's
results. A kernel runs where all its inputs are ready, which may be later
than some of its ops were, so the block is finally sorted topologically,
keeping ops with side effects in their original order.
"""

from __future__ import annotations

import heapq

from xlac.dialects.xla import FUSION, create_fusion, create_yield
from xlac.mlir import ir
from xlac.passes.base import PassFailure
from xlac.passes.fusion.op_classes import OTHER
from xlac.passes.fusion.plan import BlockPlan, FusionGroup


def materialize(plan: BlockPlan) -> None:
    graph = plan.graph
    terminator = graph.ops[-1]
    built = [(group, _build(graph.ops, group, ir.InsertionPoint(terminator)))
             for group in plan.groups]
    for group, fusion in built:
        for k, (op, result) in enumerate(group.outputs):
            graph.ops[op].results[result].replace_all_uses_with(fusion.results[k])
    doomed = {i for group in plan.groups for i in group.home} | set(plan.erase)
    for i in sorted(doomed, reverse=True):
        _erase_unused(graph.ops[i])
    priority = {fusion: max(group.home) for group, fusion in built}
    priority.update({op: i for i, op in enumerate(graph.ops) if i not in doomed})
    ordered = {op for i, op in enumerate(graph.ops) if graph.kinds[i] == OTHER}
    sort_block(terminator.block, priority, ordered)


def _build(ops: list[ir.Operation], group: FusionGroup, ip: ir.InsertionPoint) -> ir.Operation:
    members = [ops[i] for i in group.ops]
    inside = set(members)
    inputs: dict = {}
    for op in members:
        for value in op.operands:
            owner = value.owner
            if isinstance(owner, ir.Block) or owner.operation not in inside:
                inputs.setdefault(value, None)
    results = [ops[i].results[r] for i, r in group.outputs]
    loc = ir.Location.fused([op.location for op in members],
                            metadata=ir.StringAttr.get(group.kind))
    fusion, body = create_fusion(list(inputs), [v.type for v in results], group.kind, loc, ip)
    mapping = dict(zip(inputs, body.arguments))
    for op in members:
        copy = op.clone(ip=ir.InsertionPoint(body))
        for k, value in enumerate(op.operands):
            copy.operands[k] = mapping[value]
        mapping.update(zip(op.results, copy.results))
    create_yield([mapping[v] for v in results], body, loc)
    return fusion


def _erase_unused(op: ir.Operation) -> None:
    if any(len(list(result.uses)) for result in op.results):
        raise PassFailure(op.location, f"internal error in xla-fuse: '{op.name}' is still "
                          "read after its fusion was built; please report it")
    op.erase()


def sort_block(block: ir.Block, priority: dict, ordered: set) -> None:
    """Move the block's ops (all but the terminator) into a topological order.

    Among ready ops the lowest ``priority`` goes first; ops in ``ordered``
    (those that may have side effects) also keep their relative order.
    """
    ops = [op.operation for op in block.operations]
    terminator, ops = ops[-1], ops[:-1]
    waiting, readers = _dependencies(ops, ordered)
    ready = [(priority[op], k) for k, op in enumerate(ops) if not waiting[k]]
    heapq.heapify(ready)
    placed = 0
    while ready:
        _, k = heapq.heappop(ready)
        ops[k].move_before(terminator)
        placed += 1
        for reader in readers[k]:
            waiting[reader] -= 1
            if not waiting[reader]:
                heapq.heappush(ready, (priority[ops[reader]], reader))
    if placed != len(ops):
        raise PassFailure(terminator.location, "internal error in xla-fuse: the fused "
                          "block has a cycle; please report it with the input program")


def _dependencies(ops: list[ir.Operation], ordered: set) -> tuple[list[int], list[set[int]]]:
    """For each op: how many ops must come first, and which ops wait for it."""
    index = {op: k for k, op in enumerate(ops)}
    readers: list[set[int]] = [set() for _ in ops]
    chain = [k for k, op in enumerate(ops) if op in ordered]
    for before, after in zip(chain, chain[1:]):
        readers[before].add(after)
    for k, op in enumerate(ops):
        for value in _values_read(op):
            owner = value.owner
            if not isinstance(owner, ir.Block) and owner.operation in index:
                source = index[owner.operation]
                if source != k:
                    readers[source].add(k)
    waiting = [0] * len(ops)
    for targets in readers:
        for k in targets:
            waiting[k] += 1
    return waiting, readers


def _values_read(op: ir.Operation) -> list[ir.Value]:
    if not len(op.regions) or op.name == FUSION:
        return list(op.operands)
    values: list[ir.Value] = []
    op.walk(lambda inner: values.extend(inner.operands) or ir.WalkResult.ADVANCE)
    return values
