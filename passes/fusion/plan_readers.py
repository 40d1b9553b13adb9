"""xla-fuse's planner, step 2b: in a loop body, the elementwise readers of a
kernel that also reduces join it (XLA's multi-output fusion)."""

from __future__ import annotations

from xlac.passes.fusion.op_classes import CONSTANT, ELEMENTWISE, MOVEMENT, REDUCE


def fuse_reduction_readers(planner) -> None:
    """Elementwise ops reading the elementwise values of a kernel that also
    reduces over the same loop (not its reduction) join it. betainc's continued
    fraction (the update and its convergence test's `or`, one kernel) wrote two
    arrays a trip only for `1 / d` and the running product, two more loop
    nests, to read them back; XLA computes them in the body's one fusion."""
    groups = planner.groups
    for kernel in sorted(groups.members, key=groups.root):
        if kernel not in groups.members or REDUCE not in groups.classes(kernel) \
                or not groups.classes(kernel) <= {ELEMENTWISE, MOVEMENT, REDUCE, CONSTANT}:
            continue
        while kernel in groups.members and _take_a_reader(planner, kernel):
            pass


def _take_a_reader(planner, kernel: int) -> bool:
    groups, graph = planner.groups, planner.graph
    for reader in sorted(groups.successors(kernel), key=groups.root):
        ops = [i for i in groups.ops_of(reader) if graph.kinds[i] != CONSTANT]
        reads = {p for op in groups.members[reader] for p in graph.producers[op]
                 if groups.home[p] == kernel}
        if (ops and all(graph.kinds[i] in (ELEMENTWISE, MOVEMENT) for i in ops)
                and all(graph.kinds[p] != REDUCE for p in reads)
                and groups.loop_dims(reader) == groups.loop_dims(kernel)
                and groups.weight(kernel) + groups.weight(reader) <= planner.max_ops
                and not groups.would_cycle(kernel, reader)):
            groups.move(groups.root(reader), kernel)
            return True
    return False
