"""The dependence graph of one block and the fusion groups being formed on it.

Ops are numbered by their position in the block (the terminator is last).
A group is a future kernel: its *home* ops move into it, its *duplicated*
ops are copied into it and may also stay outside. A group is named by the
index of the op it started from (its root, the last consumer).
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.fusion.op_classes import OTHER, REDUCE, is_one_value, numel, op_class, type_text
from xlac.record import factory, record


@record(mutable=True)
class BlockGraph:
    ops: list[ir.Operation]
    kinds: list[str]
    producers: list[list[int]]      # ops whose results op i reads (nested reads too)
    users: list[list[int]]          # ops reading a result of op i
    chain_next: list[list[int]]     # order edges: ops of class OTHER keep their order
    index: dict                     # op -> its position
    sizes: list[int]                # iteration_size of op i, asked once per merge candidate
    weights: list[float]            # what op i counts for against max-ops (op_weight)

    @property
    def size(self) -> int:
        return len(self.ops)

    def top_level(self, op: ir.Operation) -> int:
        """Position of the block's op that is or contains ``op``."""
        while op not in self.index:
            op = op.parent.operation
        return self.index[op]


def build_graph(block: ir.Block) -> BlockGraph:
    ops = [op.operation for op in block.operations]
    index = {op: i for i, op in enumerate(ops)}
    kinds = [op_class(op) for op in ops]
    producers = [sorted(_read_ops(op, kind, index) - {i})
                 for i, (op, kind) in enumerate(zip(ops, kinds))]
    users: list[list[int]] = [[] for _ in ops]
    for i, reads in enumerate(producers):
        for j in reads:
            users[j].append(i)
    chain_next: list[list[int]] = [[] for _ in ops]
    others = [i for i, kind in enumerate(kinds) if kind == OTHER]
    for before, after in zip(others, others[1:]):
        chain_next[before].append(after)
    sizes = [_iteration_size(op, kind) for op, kind in zip(ops, kinds)]
    weights = [op_weight(op) for op in ops]
    return BlockGraph(ops, kinds, producers, users, chain_next, index, sizes, weights)


INTEGER_OP_WEIGHT = 0.25
CHEAP_FLOAT_OP_WEIGHT = 0.25
_COSTLY_INTEGER_OPS = ("stablehlo.divide", "stablehlo.remainder", "stablehlo.power")
# One vector instruction each on f32/f64 (or a compare's i1 mask): no call,
# no polynomial, no conversion sequence.
_CHEAP_FLOAT_OPS = frozenset(f"stablehlo.{name}" for name in [
    "abs", "add", "clamp", "compare", "convert", "maximum", "minimum", "multiply", "negate",
    "select", "sign", "subtract"])


def op_weight(op: ir.Operation) -> float:
    """An op's share of a kernel's max-ops. Integer and bit ops (threefry's
    ~140 adds, xors and shifts, hashing) are one instruction each where a
    float op may be a polynomial of dozens (sine, exp), and the limit is there
    for LLVM's time on a kernel: they count a quarter, so jax.random's
    threefry is one kernel (13.8 -> 0.5 ms for 1M numbers), not a pass over
    memory per 64 ops. A splat constant or a broadcast of one element counts
    nothing: it is no instruction in the loop, and counted, the constants of
    an expansion such as erfc's (about 25, copied into every kernel that uses
    one) filled GELU's kernel, which left its bias add and its two broadcast
    scalars out: each a pass over memory, the broadcasts written out whole.
    A static slice counts nothing either: in the kernel it is an offset in its
    reader's index, no instruction per element (a stencil's rolls, two slices
    each, filled the shallow-water step's kernel before its arithmetic did),
    nor does a reshape to one element (_picks_one_element).
    Adds, multiplies, selects, compares and converts on f32/f64 count a
    quarter as integer ops do (_is_cheap_float): a special function's series
    (i0e's Chebyshev sums, ~160 of them) was cut into five kernels and two
    single ops at 64, each a pass over memory, where XLA runs one."""
    if is_one_value(op) or op.name == "stablehlo.slice" or _picks_one_element(op):
        return 0.0
    if _is_cheap_float(op):
        return CHEAP_FLOAT_OP_WEIGHT
    results = [value.type for value in op.results]
    if results and op.name not in _COSTLY_INTEGER_OPS and all(
            isinstance(t, ir.RankedTensorType) and isinstance(t.element_type, ir.IntegerType)
            for t in results):
        return INTEGER_OP_WEIGHT
    return 1.0


def _picks_one_element(op: ir.Operation) -> bool:
    """A reshape to one element (ndtri's coefficients: slice [i:i+1], reshape to a
    scalar, broadcast): like the slice, an index, no instruction per element."""
    return op.name == "stablehlo.reshape" and numel(op.results[0].type) == 1


def _is_cheap_float(op: ir.Operation) -> bool:
    """A _CHEAP_FLOAT_OPS op whose operands and results are all f32, f64 or i1
    tensors (f16/bf16 may be widened and narrowed around each op; i64 to f32
    is a sequence at AVX2)."""
    if op.name not in _CHEAP_FLOAT_OPS:
        return False
    for value in (*op.operands, *op.results):
        t = value.type
        if not isinstance(t, ir.RankedTensorType) or not _cheap_element(t.element_type):
            return False
    return True


def _cheap_element(element: ir.Type) -> bool:
    if isinstance(element, ir.IntegerType):
        return element.width == 1
    return isinstance(element, (ir.F32Type, ir.F64Type))


def _iteration_size(op: ir.Operation, kind: str) -> int:
    """``iteration_size`` with the op's class known (classifying a reduce walks its body)."""
    if kind == REDUCE:
        return max(numel(value.type) for value in op.operands)
    return max((numel(value.type) for value in op.results), default=1)


def _read_ops(op: ir.Operation, kind: str, index: dict) -> set[int]:
    """Indices of the block's ops whose results ``op`` (or, for OTHER, its regions) reads."""
    readers = [op]
    if kind == OTHER and len(op.regions):
        readers = []
        op.walk(lambda inner: readers.append(inner) or ir.WalkResult.ADVANCE)
    found = set()
    for reader in readers:
        for value in reader.operands:
            owner = value.owner
            if not isinstance(owner, ir.Block) and owner.operation in index:
                found.add(index[owner.operation])
    return found


@record(mutable=True)
class Groups:
    """Which group each op lives in, and which groups hold copies of it."""

    graph: BlockGraph
    home: list[int] = factory(list)
    members: dict[int, set[int]] = factory(dict)
    dups: dict[int, set[int]] = factory(dict)
    dup_holders: list[set[int]] = factory(list)
    # A topological order of the groups (every edge goes up), kept through
    # merges where that is cheap: a path search prunes the groups past its
    # goal, so a check that cannot cycle costs nothing instead of a walk of
    # every later group (xla-fuse on 17,501 chained ops: 90 s of searches).
    order: dict[int, float] = factory(dict)
    ordered: bool = True
    reorders: int = 0                       # how often the order was rebuilt (tests count it)
    # Each group's successors since the last change of any group: the path
    # searches of sibling fusion ask for the same groups' again and again
    # (ViT: 16,000 computations for 1,900 searches, 0.1 s of xla-fuse's 0.15).
    _successors: dict[int, frozenset[int]] = factory(dict)

    def __post_init__(self):
        n = self.graph.size
        self.home = list(range(n))
        self.members = {i: {i} for i in range(n)}
        self.dups = {i: set() for i in range(n)}
        self.dup_holders = [set() for _ in range(n)]
        self.order = {i: i for i in range(n)}

    def has(self, group: int, op: int) -> bool:
        return op in self.members[group] or op in self.dups[group]

    def ops_of(self, group: int) -> list[int]:
        return sorted(self.members[group] | self.dups[group])

    def weight(self, group: int) -> float:
        """The group's ops, weighed as max-ops counts them (op_weight)."""
        return sum(self.graph.weights[op] for op in self.members[group] | self.dups[group])

    def holders(self, op: int) -> set[int]:
        return {self.home[op]} | self.dup_holders[op]

    def move(self, op: int, group: int) -> None:
        """``op`` (with everything in its group) now lives in ``group``."""
        old = self.home[op]
        self._keep_order_merging(old, group)
        for moved in self.members.pop(old):
            self.home[moved] = group
            self.members[group].add(moved)
        for copied in self.dups.pop(old):
            self.dup_holders[copied].discard(old)
            self.duplicate(copied, group)
        self.dups[group] -= self.members[group]
        for moved in self.members[group]:
            self.dup_holders[moved].discard(group)
        self._successors.clear()              # _keep_order_merging asked before the move

    def dissolve(self, group: int) -> None:
        """Give up ``group``: its ops stand alone again, its copies are dropped."""
        self._successors.clear()
        self.ordered = False
        for copied in self.dups[group]:
            self.dup_holders[copied].discard(group)
        self.dups[group] = set()
        for op in self.members.pop(group):
            self.home[op] = op
            self.members[op] = {op}
            self.dups.setdefault(op, set())

    def duplicate(self, op: int, group: int) -> None:
        if op not in self.members[group]:
            self._successors.clear()
            self.dups[group].add(op)
            self.dup_holders[op].add(group)
            if self.ordered and any(self.order[self.home[p]] >= self.order[group]
                                    for p in self.graph.producers[op]
                                    if self.home[p] != group):
                self.ordered = False             # a new edge into the group goes down

    def _keep_order_merging(self, old: int, group: int) -> None:
        """The merged group takes the later place. The groups placed between the
        two that the earlier one feeds, directly or through each other, then
        come after it: they move to just past that place, in their order (the
        order rebuilt whole each time, 12 times on ViT, was a third of xla-fuse)."""
        if not self.ordered or old == group:
            return
        early, late = sorted((old, group), key=self.order.__getitem__)
        place = self.order[late]
        fed = self._fed_before(early, place, late)
        if fed is None:
            self.ordered = False                 # the merge makes a cycle: searches unpruned
        elif fed:
            self._place_after(fed, place)
        self.order[group] = place
        del self.order[old]

    def _fed_before(self, early: int, place: float, late: int) -> list[int] | None:
        """The groups placed before ``place`` that ``early`` reaches, not through
        ``late``; None if one of them feeds ``late``."""
        stack = [s for s in self.successors(early) if s != late and self.order[s] < place]
        seen = set(stack)
        while stack:
            for nxt in self.successors(stack.pop()):
                if nxt == late:
                    return None
                if nxt not in seen and self.order[nxt] < place:
                    seen.add(nxt)
                    stack.append(nxt)
        return sorted(seen, key=self.order.__getitem__)

    def _place_after(self, groups: list[int], place: float) -> None:
        """``groups`` (in order) numbered between ``place`` and the next place
        taken; no other group is placed there, so no edge turns downwards."""
        nxt = min((at for at in self.order.values() if at > place), default=place + 1)
        step = (nxt - place) / (len(groups) + 1)
        if place + step <= place or place + step * len(groups) >= nxt:
            self.ordered = False                 # too fine for floats: rebuilt when next asked
            return
        for k, moved in enumerate(groups, 1):
            self.order[moved] = place + step * k

    def _reorder(self) -> None:
        """A topological order of the groups as they are now (Kahn's algorithm)."""
        import heapq
        self.reorders += 1
        nexts = {g: self.successors(g) for g in self.members}
        waiting = dict.fromkeys(self.members, 0)
        for targets in nexts.values():
            for target in targets:
                waiting[target] += 1
        ready = [g for g, count in waiting.items() if count == 0]
        heapq.heapify(ready)
        self.order = {}
        while ready:
            group = heapq.heappop(ready)
            self.order[group] = len(self.order)
            for target in nexts[group]:
                waiting[target] -= 1
                if waiting[target] == 0:
                    heapq.heappush(ready, target)
        self.ordered = len(self.order) == len(self.members)   # else: search unpruned

    def outside_users(self, op: int, group: int) -> set[int]:
        """Users of ``op`` that would still read it from outside ``group``."""
        return {user for user in self.graph.users[op]
                for holder in self.holders(user)
                if holder != group and not self.has(holder, op)}

    def classes(self, group: int) -> set[str]:
        return {self.graph.kinds[i] for i in self.members[group] | self.dups[group]}

    def loop_size(self, group: int) -> int:
        sizes = self.graph.sizes
        return max(sizes[i] for i in self.members[group] | self.dups[group])

    def loop_shape(self, group: int) -> str:
        """The shape the group's loop nest walks: its widest op's (a reduction's input)."""
        return type_text(self._loop_type(group))

    def loop_dims(self, group: int) -> tuple[int, ...]:
        """``loop_shape``'s dimensions, whatever the element type: a kernel writing
        a mask (i1) walks the same loop as one writing floats (XLA's
        multi-output fusion compares shapes ignoring element types too)."""
        return tuple(ir.ShapedType(self._loop_type(group)).shape)

    def _loop_type(self, group: int) -> ir.Type:
        widest = max(self.ops_of(group), key=lambda i: (self.graph.sizes[i], i))
        op = self.graph.ops[widest]
        values = op.operands if self.graph.kinds[widest] == REDUCE else op.results
        return max(values, key=lambda v: numel(v.type)).type

    def reduce_dims(self, group: int) -> set[str]:
        return {str(self.graph.ops[i].attributes["dimensions"])
                for i in self.ops_of(group) if self.graph.kinds[i] == REDUCE}

    def root(self, group: int) -> int:
        return max(self.members[group])

    def successors(self, group: int) -> frozenset[int]:
        """Groups that read a value ``group`` computes (or must run after it)."""
        known = self._successors.get(group)
        if known is None:
            known = self._successors[group] = frozenset(self._find_successors(group))
        return known

    def _find_successors(self, group: int) -> set[int]:
        found = set()
        for op in self.members[group]:
            for user in self.graph.users[op]:
                found.update(holder for holder in self.holders(user)
                             if holder != group and not self.has(holder, op))
            found.update(self.home[after] for after in self.graph.chain_next[op])
        found.discard(group)
        return found

    def would_cycle(self, first: int, second: int) -> bool:
        """Merging the two groups would make one depend on itself."""
        return self._reaches_indirectly(first, second) or self._reaches_indirectly(second, first)

    def connected(self, first: int, second: int) -> bool:
        """One group reads (directly or not) what the other computes."""
        return self._reaches(first, second, direct=True) or self._reaches(second, first, direct=True)

    def _reaches_indirectly(self, start: int, goal: int) -> bool:
        return self._reaches(start, goal, direct=False)

    def _reaches(self, start: int, goal: int, direct: bool) -> bool:
        if not self.ordered:
            self._reorder()
        pruned = self.ordered
        if pruned and self.order[start] > self.order[goal]:
            return False                          # every edge goes up the order
        limit = self.order[goal] if pruned else None
        successors = self.successors(start)
        if direct and goal in successors:
            return True
        stack = [g for g in successors if g != goal and (limit is None or self.order[g] < limit)]
        seen = set(stack)
        while stack:
            current = stack.pop()
            for nxt in self.successors(current):
                if nxt == goal:
                    return True
                if nxt not in seen and (limit is None or self.order[nxt] < limit):
                    seen.add(nxt)
                    stack.append(nxt)
        return False
