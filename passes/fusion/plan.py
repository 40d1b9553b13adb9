"""xla-fuse's decisions for one block, made on the graph before any IR changes.

1. Producer-consumer fusion (XLA's greedy instruction fusion): consumers are
   visited last to first; each grows its kernel by pulling in producers.
   A producer with other consumers is copied in when cheap; an expensive
   one only joins a reduction's kernel, which then also writes it out
   (multi-output). Reductions never fuse into consumers: their result is
   complete only after a full pass. A dot or convolution joins its
   elementwise consumer (output fusion) when nothing else reads it.
2. Sibling fusion: kernels that read the same large input over the same
   iteration space become one multi-output kernel, so the input is read once.
2a. Producer kernels (``producer_kernels``): an elementwise kernel joins an
   elementwise kernel that reads it over the same loop, within max-ops, in a
   loop body or when the two make ONE_NEST_OPS or more; with
   them, elementwise siblings whose loops differ only in element type (a mask
   and the floats it selects) merge too, as in XLA (not reductions: a
   transformer's merged softmax siblings were more loop nests and copies).
2b. Reduction readers (with producer kernels, in a loop body; plan_readers.py):
   elementwise ops reading a reducing kernel's elementwise values join it.
3. Kernels with a single computing op are dropped; every other group
   becomes a ``FusionGroup`` with the values it must hand out.
"""

from __future__ import annotations

import re

from xlac.mlir import ir
from xlac.passes.fusion.op_classes import (
    CONSTANT,
    DOT,
    ELEMENTWISE,
    MOVEMENT,
    OTHER,
    REDUCE,
    SMALL_CONSTANT,
    effectively_at_most_unary,
    is_duplicable,
    is_expensive,
    iteration_size,
    numel,
    type_text,
)
from xlac.passes.fusion.op_graph import BlockGraph, Groups
from xlac.passes.fusion.plan_readers import fuse_reduction_readers
from xlac.record import record

_CONSUMERS = (ELEMENTWISE, MOVEMENT, REDUCE)
# a merged kernel this big is a function of its own (xla-outline-fusions' min-ops),
# one loop nest for xla-merge-kernel-generics; a smaller one outside loops is split
# by linalg's fusion again, often into more loop nests (lax.digamma: 4 -> 5)
ONE_NEST_OPS = 32


@record
class Rejection:
    op: ir.Operation       # where the remark goes: the candidate left out
    message: str


@record(mutable=True)
class FusionGroup:
    ops: list[int]                    # positions of the ops copied into the kernel, in order
    home: set[int]                    # of those, the ones whose originals go away
    outputs: list[tuple[int, int]]    # (op, result number) read outside the kernel
    kind: str


@record(mutable=True)
class BlockPlan:
    graph: BlockGraph
    groups: list[FusionGroup]
    erase: list[int]                  # originals whose every reader got its own copy


def plan_block(graph: BlockGraph, max_ops: int, producer_kernels: bool = True,
               in_loop: bool = False) -> tuple[BlockPlan, list[Rejection]]:
    planner = _Planner(graph, max_ops, producer_kernels)
    planner.in_loop = in_loop
    planner.fuse_producers()
    planner.fuse_siblings()
    if producer_kernels:
        planner.fuse_producer_kernels()
        if in_loop:
            fuse_reduction_readers(planner)
    planner.fuse_lone_dots()
    return planner.finish(), planner.rejections


class _Planner:
    def __init__(self, graph: BlockGraph, max_ops: int, any_element_types: bool = True):
        self.graph = graph
        self.max_ops = max_ops
        self.any_element_types = any_element_types    # siblings of one loop, whatever they write
        self.in_loop = False                          # a while body: its kernels run each trip
        self.groups = Groups(graph)
        self.rejections: list[Rejection] = []

    # -- 1. producer-consumer fusion ------------------------------------
    def fuse_producers(self) -> None:
        for op in reversed(range(self.graph.size)):
            if (self.graph.kinds[op] in _CONSUMERS and self.groups.home[op] == op
                    and not self._dead(op)):
                self._grow(op)

    def _dead(self, op: int) -> bool:
        """Every reader of ``op`` has its own copy: the original will go away."""
        return bool(self.graph.users[op]) and not self.groups.outside_users(op, -1)

    def _grow(self, group: int) -> None:
        """Fuse producers into ``group``, nearest (highest index) first, each tried
        once: fused, it is in the group; rejected, it stays out. The group only
        grows here, so its candidates are kept and widened by the ops it gains
        (recollected from all its ops per try, they were 0.15 s of ViT's xla-fuse)."""
        scanned: set[int] = set()
        pool: set[int] = set()
        while True:
            self._widen(group, scanned, pool)
            candidate = self._nearest(group, pool)
            if candidate is None:
                return
            reason = self._try_fuse(candidate, group)
            if reason:
                self._reject(candidate, group, reason)

    def _widen(self, group: int, scanned: set[int], pool: set[int]) -> None:
        """Add to ``pool`` the producers read by the group's ops not yet ``scanned``;
        dot operands excluded (a dot reads each operand element many times: fused,
        it would recompute it)."""
        new = (self.groups.members[group] | self.groups.dups[group]) - scanned
        scanned |= new
        kinds, producers = self.graph.kinds, self.graph.producers
        pool.update(p for op in new if kinds[op] != DOT for p in producers[op] if kinds[p] != OTHER)

    def _nearest(self, group: int, pool: set[int]) -> int | None:
        """The highest producer in ``pool`` outside the group, taken out of it."""
        while pool:
            candidate = max(pool)
            pool.discard(candidate)
            if not self.groups.has(group, candidate):
                return candidate
        return None

    def _try_fuse(self, producer: int, group: int) -> str:
        """Fuse ``producer`` into ``group`` and return "", or say why not."""
        # an op that weighs nothing (a splat, a broadcast scalar) joins a full
        # kernel: left out, it would be written out whole for the kernel to read
        if self.groups.weight(group) >= self.max_ops and self.graph.weights[producer] > 0:
            return f"the fusion already has max-ops={self.max_ops} ops"
        kind = self.graph.kinds[producer]
        if kind == REDUCE:
            return "reduction result needs a full pass over its input first"
        if kind == DOT:
            return self._try_output_fusion(producer, group)
        return self._try_loop_fusion(producer, group)

    def _try_output_fusion(self, dot: int, group: int) -> str:
        groups = self.groups
        classes = groups.classes(group)
        if DOT in classes:
            return "the fusion already has a dot or convolution"
        if REDUCE in classes:
            return "a reduction cannot be a dot's epilogue"
        outside = groups.outside_users(dot, group)
        if outside:
            return (f"its result is also read by {len(outside)} op(s) outside the fusion; "
                    "the dot would run twice")
        loop, size = groups.loop_size(group), iteration_size(self.graph.ops[dot])
        if loop != size:
            return f"the epilogue iterates over {loop} elements, the dot's result has {size}"
        return self._move(dot, group)

    def _try_loop_fusion(self, producer: int, group: int) -> str:
        groups, op = self.groups, self.graph.ops[producer]
        if self.graph.kinds[producer] == CONSTANT and is_duplicable(op):
            # Copied, never moved in: finish() drops the copies of a kernel it
            # gives up, whose op then reads the original. Were the original in
            # another kernel, that kernel would feed the op, an edge no cycle
            # check saw (kernel -> reduce -> all_reduce -> the same kernel).
            groups.duplicate(producer, group)
            return ""
        home = groups.home[producer]
        if home != group and len(groups.members[home]) > 1:
            if is_duplicable(op) and effectively_at_most_unary(op):
                groups.duplicate(producer, group)
                return ""
            return f"it already belongs to the fusion rooted at {self._name(groups.root(home))}"
        size, loop = iteration_size(op), groups.loop_size(group)
        if is_expensive(op) and 0 < size < loop:   # an empty op costs nothing anywhere
            return f"expensive op would be recomputed {loop // size}x (once per broadcast element)"
        if not groups.outside_users(producer, group):
            return self._move(producer, group)
        unary = effectively_at_most_unary(op)
        if is_duplicable(op) and unary:
            groups.duplicate(producer, group)
            return ""
        if self.graph.kinds[producer] != CONSTANT and (REDUCE in groups.classes(group)
                                                        or (not unary and size == loop)):
            return self._move(producer, group)      # multi-output: the kernel also writes it
        consumers = len(self.graph.users[producer])
        if self.graph.kinds[producer] == CONSTANT:
            return f"constant of {size} elements has {consumers} consumers; it stays in memory"
        if is_duplicable(op):
            return (f"producer has {consumers} consumers and reads more than one input: "
                    "a copy in each would read them all again")
        return f"producer has {consumers} consumers and is expensive"

    def _move(self, producer: int, group: int) -> str:
        if self.groups.would_cycle(self.groups.home[producer], group):
            return "would make a cycle"
        self.groups.move(producer, group)
        return ""

    # -- 2. sibling (multi-output) fusion --------------------------------
    def fuse_siblings(self) -> None:
        for value, readers in self._readers_by_value().items():
            siblings = self._full_readers(value, readers)
            for other in siblings[1:]:
                first, second = self.groups.home[siblings[0]], self.groups.home[other]
                if first == second or self.groups.connected(first, second):
                    continue        # not siblings: one reads the other's result
                reason = self._try_merge(first, second)
                if reason:
                    self._reject_sibling(other, first, value, reason)

    def _readers_by_value(self) -> dict:
        readers: dict = {}
        for i, op in enumerate(self.graph.ops):
            if self.graph.kinds[i] not in (OTHER, CONSTANT):
                for value in op.operands:
                    readers.setdefault(value, []).append(i)
        return readers

    def _full_readers(self, value: ir.Value, readers: list[int]) -> list[int]:
        """Roots of the kernels that read all of ``value`` (a large input), in order."""
        size = numel(value.type)
        owner = value.owner
        producer = None if isinstance(owner, ir.Block) else self.graph.index.get(owner.operation)
        found = []
        for reader in readers:
            for group in sorted(self.groups.holders(reader)):
                if (size > SMALL_CONSTANT and group not in found and self._sibling_kind(group)
                        and not self.groups.has(group, producer)
                        and self.groups.loop_size(group) == size):
                    found.append(group)
        return [self.groups.root(g) for g in found]

    def _sibling_kind(self, group: int) -> bool:
        members = self.groups.members[group]
        if len(members) == 1 and self._dead(next(iter(members))):
            return False
        return not self.groups.classes(group) & {DOT, OTHER}

    def _try_merge(self, first: int, second: int) -> str:
        shapes = (self.groups.loop_shape(first), self.groups.loop_shape(second))
        elementwise = not (self.groups.classes(first) | self.groups.classes(second)) & {REDUCE}
        if (self.groups.loop_dims(first) != self.groups.loop_dims(second) if self.any_element_types
                and elementwise else shapes[0] != shapes[1]):
            return f"the siblings iterate over different shapes ({shapes[0]} vs {shapes[1]})"
        if len(self.groups.reduce_dims(first) | self.groups.reduce_dims(second)) > 1:
            return "the siblings reduce over different dimensions"
        if self.groups.weight(first) + self.groups.weight(second) > self.max_ops:
            return f"together they would exceed max-ops={self.max_ops}"
        self.groups.move(self.groups.root(second), first)
        return ""

    # -- 2a. elementwise kernels into the kernels that read them ---------
    def fuse_producer_kernels(self) -> None:
        """A kernel of elementwise ops joins an elementwise kernel that reads it
        over the same loop (XLA's producer-consumer multi-output fusion): the
        consumer's pass computes the producer's values in registers, writing out
        those read elsewhere. A continued fraction's loop body (igamma's): the
        update of its numerators and denominators, the rescaling that reads
        them and the convergence mask, three kernels a trip, are one."""
        groups = self.groups
        for consumer in sorted(groups.members, key=groups.root, reverse=True):
            while consumer in groups.members and self._merge_a_producer(consumer):
                pass

    def _merge_a_producer(self, consumer: int) -> bool:
        groups = self.groups
        if not self._elementwise_kernel(consumer):
            return False
        producers = {groups.home[p] for op in groups.members[consumer] for p in self.graph.producers[op]}
        for producer in sorted(producers - {consumer}, key=groups.root, reverse=True):
            if (consumer in groups.successors(producer)
                    and self._elementwise_kernel(producer)
                    and groups.loop_dims(producer) == groups.loop_dims(consumer)
                    and (self.in_loop or groups.weight(producer) + groups.weight(consumer) >= ONE_NEST_OPS)
                    and groups.weight(producer) + groups.weight(consumer) <= self.max_ops
                    and not groups.would_cycle(producer, consumer)):
                groups.move(groups.root(producer), consumer)
                return True
        return False

    def _elementwise_kernel(self, group: int) -> bool:
        """A kernel of two or more computing ops, all elementwise or movement."""
        ops = [i for i in self.groups.ops_of(group) if self.graph.kinds[i] != CONSTANT]
        return len(ops) >= 2 and all(self.graph.kinds[i] in (ELEMENTWISE, MOVEMENT) for i in ops)

    # -- 2b. dots whose only reader ended up in one kernel ---------------
    def fuse_lone_dots(self) -> None:
        """A dot rejected because a copied consumer still read it outside
        (e.g. a bias add copied into three slices' kernels, merged later)
        joins the one kernel that reads it in the end."""
        for dot in range(self.graph.size):
            if self.graph.kinds[dot] != DOT or self.groups.home[dot] != dot:
                continue
            readers = self._reading_groups(dot)
            if len(readers) != 1:
                continue
            group = readers.pop()
            classes = self.groups.classes(group)
            if (not classes & {DOT, REDUCE, OTHER}
                    and self.groups.loop_size(group) == iteration_size(self.graph.ops[dot])
                    and not self._move(dot, group)):
                self.rejections = [r for r in self.rejections if r.op != self.graph.ops[dot]]

    def _reading_groups(self, op: int) -> set[int]:
        """Groups that will read ``op``'s results (readers that go away excluded)."""
        return {holder for user in self.graph.users[op] for holder in self.groups.holders(user)
                if not self.groups.has(holder, op)
                and not (holder == user and len(self.groups.members[user]) == 1 and self._dead(user))}

    # -- 3. the kernels to build ------------------------------------------
    def finish(self) -> BlockPlan:
        groups = self.groups
        built = set()
        for group in sorted(set(groups.home)):
            computing = [i for i in groups.ops_of(group) if self.graph.kinds[i] != CONSTANT]
            if len(computing) >= 2:
                built.add(group)
            elif len(groups.members[group]) > 1 or groups.dups[group]:
                groups.dissolve(group)
        outputs, erase = self._outputs_and_dead(built)
        plans = [FusionGroup(groups.ops_of(g), set(groups.members[g]), sorted(outputs[g]),
                             self._kind(g, outputs[g])) for g in sorted(built, key=groups.root)]
        return BlockPlan(self.graph, plans, erase)

    def _outputs_and_dead(self, built: set[int]) -> tuple[dict, list[int]]:
        """Which results each kernel hands out, and which originals nobody reads.

        Readers come after what they read, so one backward sweep decides both.
        """
        outputs: dict[int, list] = {g: [] for g in built}
        live: set[int] = set()
        erase: list[int] = []
        for i in reversed(range(self.graph.size)):
            op, group = self.graph.ops[i], self.groups.home[i]
            needed = [r for r, value in enumerate(op.results)
                      if self._read_outside(value, i, group, built, live)]
            if group in built:
                outputs[group] += [(i, r) for r in needed]
            elif needed or self.graph.kinds[i] == OTHER or not self.graph.users[i]:
                live.add(i)
            else:
                erase.append(i)
        return outputs, erase

    def _read_outside(self, value, op: int, group: int, built: set[int], live: set[int]) -> bool:
        for use in value.uses:
            user = self.graph.top_level(use.owner.operation)
            for holder in self.groups.holders(user):
                if holder in built and holder != group and not self.groups.has(holder, op):
                    return True
                if holder not in built and user in live:
                    return True
        return False

    def _kind(self, group: int, outputs: list) -> str:
        classes = {self.graph.kinds[i] for i in self.groups.members[group]}
        if DOT in classes:
            return "output"
        if len(outputs) > 1:
            return "multi_output"
        return "input" if REDUCE in classes else "loop"

    # -- remarks ---------------------------------------------------------
    def _reject(self, producer: int, group: int, reason: str) -> None:
        root = self.groups.root(group)
        self.rejections.append(Rejection(
            self.graph.ops[producer], f"not fused into the fusion rooted at {self._name(root)}: {reason}"))

    def _reject_sibling(self, other: int, first: int, value, reason: str) -> None:
        self.rejections.append(Rejection(
            self.graph.ops[other],
            f"not merged with the sibling kernel rooted at {self._name(self.groups.root(first))}, "
            f"which also reads the {type_text(value.type)} input: {reason}"))

    def _name(self, op: int) -> str:
        """``'stablehlo.add' (line 12)``: how a remark names another op."""
        operation = self.graph.ops[op]
        line = re.search(r":(\d+):\d+", str(operation.location))
        return f"'{operation.name}'" + (f" (line {line.group(1)})" if line else "")
