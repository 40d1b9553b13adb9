"""Which kernels of a host block may run as one launch, and the order of the
block's ops that puts each such group side by side (for
``gpu_horizontal_launches.py``).

The block's ops form a graph: an op depends on the op defining a value it uses
(a kernel: any value its body captures) and on the last op that wrote a buffer
it reads or writes, or that read a buffer it writes (buffers by root,
``launch_effects``); an op with regions (host control flow) or an unknown call
depends on every op with effects before it, and every one after it on it.

Two kernels at the same depth have no path between them, where depth counts
the ops with effects on the longest path from the block's start (as soon as
possible) or to its end (as late as possible): a path a -> ... -> b passes a, so
b is deeper. So the kernels of one depth (and one thread count) can be one node,
and the graph stays acyclic with every such group contracted at once. Both
depths are tried; the one that leaves fewer launches is taken: an optimizer's
updates are sinks that only the return reads, all at depth 0 from the end,
while the gradients they read come at every depth from the start.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from xlac.mlir import ir

from .launch_effects import Effects, captured_values, host_op_effects, launch_effects


def dependences(ops: list[ir.Operation], effects: list[Effects]) -> list[set[int]]:
    """For each op, the positions of the ops it must follow."""
    position = {op: i for i, op in enumerate(ops)}
    before: list[set[int]] = [set() for _ in ops]
    last_write: dict = {}
    reads_since: dict = defaultdict(list)
    since_barrier: list[int] = []
    barrier = None
    for i, (op, effect) in enumerate(zip(ops, effects)):
        for value in _used_values(op):
            owner = value.owner
            if not isinstance(owner, ir.Block) and owner.operation in position:
                before[i].add(position[owner.operation])
        if effect.barrier:
            before[i].update(since_barrier)
            since_barrier, barrier = [], i
        elif barrier is not None:
            before[i].add(barrier)
        for root in effect.reads | effect.writes:
            if root in last_write:
                before[i].add(last_write[root])
        for root in effect.writes:
            before[i].update(reads_since[root])
        for root in effect.reads:
            reads_since[root].append(i)
        for root in effect.writes:
            last_write[root], reads_since[root] = i, []
        if effect.reads or effect.writes:
            since_barrier.append(i)
        before[i].discard(i)
    return before


def _used_values(op: ir.Operation):
    if op.regions:
        return captured_values(op) | set(op.operands)
    return op.operands


def op_effects(op: ir.Operation) -> Effects:
    return launch_effects(op) if op.name == "gpu.launch" else host_op_effects(op)


def depths(before: list[set[int]], weights: list[int], from_end: bool) -> list[int]:
    """Each op's depth: ops with effects (weight 1) on the longest path from the
    block's start to it, or from it to the end."""
    count = len(before)
    depth = [0] * count
    if not from_end:
        for i in range(count):
            depth[i] = max((depth[p] + weights[p] for p in before[i]), default=0)
        return depth
    after: list[list[int]] = [[] for _ in range(count)]
    for i, preds in enumerate(before):
        for p in preds:
            after[p].append(i)
    for i in reversed(range(count)):
        depth[i] = max((depth[s] + weights[s] for s in after[i]), default=0)
    return depth


def order(before: list[set[int]], node_of: list[int]) -> list[int] | None:
    """A topological order of the ops with each node's ops consecutive (``node_of``:
    the node each op belongs to), the earliest ready node first; None if the
    contracted graph has a cycle."""
    members: dict[int, list[int]] = defaultdict(list)
    for i, node in enumerate(node_of):
        members[node].append(i)
    waiting = {node: {node_of[p] for i in ops for p in before[i]} - {node}
               for node, ops in members.items()}
    users: dict[int, set[int]] = defaultdict(set)
    for node, needs in waiting.items():
        for need in needs:
            users[need].add(node)
    ready = [(ops[0], node) for node, ops in members.items() if not waiting[node]]
    heapq.heapify(ready)
    result = []
    while ready:
        _, node = heapq.heappop(ready)
        result += members[node]
        for user in users[node]:
            waiting[user].discard(node)
            if not waiting[user]:
                heapq.heappush(ready, (members[user][0], user))
    return result if len(result) == len(node_of) else None
