"""xla-double-buffer-loop-carries: a bufferized while's recomputed carry alternates between two buffers."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass
from xlac.passes.buffers.hand_over_loop_carries import (
    VIEWS,
    base,
    copy_of_carry,
    for_each_while,
    loop_parts,
    only_read,
    whole,
)


class DoubleBufferLoopCarries(ModulePass):
    """Give an ``scf.while``'s recomputed carry two buffers, allocated before
    the loop, that the trips take in turn: each trip writes its new carry
    into the one that does not hold the carry it reads.

    Why: after one-shot bufferization a small carry costs per trip either an
    alloc in the after region that the next trip frees (a kernel call's
    out-param, handed over by xla-hand-over-loop-carries), or, where
    buffer-loop-hoisting took the body's buffer out of the loop (a small
    body inlined in the loop), an alloc and a copy of the whole carry in the
    before region and its free in the after region. On a 64-float carry
    that is most of a trip (fori_loop at 2.5x XLA).

    Sound when: the carry is only read inside the loop (before and after
    regions, through views and kernel calls); the after region yields at
    its position (a reshape of all of) one buffer ``A`` that no other carry
    yields or views and that only the after region uses (a static alloc of
    the after region, moved out, or one hoisted out of the loop); a copy
    in the before region, if any, is the carry's own. Then the carry a trip
    reads is the init buffer, ``A`` or the second buffer ``B``, and
    ``select(carry is A, B, A)`` is never it. Bufferization gives ``A``
    no content from one trip to the next (a tensor.empty's buffer), so
    writing ``B`` instead of ``A`` changes nothing. Ownership-based
    deallocation frees the init buffer after the first trip, and ``A``,
    ``B`` and the loop's result (one of them, or the init buffer) once
    after the loop. Runs after xla-hand-over-loop-carries, before
    deallocation. Example:

        %A = memref.alloc
        scf.while (%a = %init) { %n = memref.alloc; memref.copy %a, %n
                                 scf.condition(%p) %n }
        do { ^bb0(%b): linalg.generic ins(%b) outs(%A); scf.yield %A }
      becomes
        %A = memref.alloc
        %B = memref.alloc
        scf.while (%a = %init) { scf.condition(%p) %a }
        do { ^bb0(%b): %o = arith.select (%b is %A), %B, %A
                       linalg.generic ins(%b) outs(%o); scf.yield %o }
    """

    name = "xla-double-buffer-loop-carries"
    acts_on = frozenset({"scf.while"})

    def run(self, module: ir.Operation) -> None:
        for_each_while(module, _double_buffer)


def _double_buffer(loop: ir.Operation, functions: dict[str, ir.Operation]) -> None:
    before, after, condition, yielded = loop_parts(loop)
    for j, passed in enumerate(list(condition.operands)[1:]):
        if j >= len(after.arguments):
            continue
        k, copy = _carry_passed(passed, before, condition, j)
        if k is None or k >= len(yielded):
            continue
        carry = before.arguments[k]
        buffer = _own_buffer(loop, yielded, k, after)
        if buffer is None or not only_read(carry, functions, skip=copy or condition) \
                or not only_read(after.arguments[j], functions):
            continue
        if copy is not None:
            condition.operands[1 + j] = carry
            allocation = passed.owner
            copy.erase()
            allocation.erase()
        _alternate(loop, buffer, after, j)


def _carry_passed(passed: ir.Value, before: ir.Block, condition: ir.Operation,
                  j: int) -> tuple[int | None, ir.Operation | None]:
    """Which carry ``k`` the condition passes at ``j`` (its own copy, or itself
    passed there alone), and that copy. ``k`` and ``j`` differ where the loop
    keeps a carry in the before region only (a flag the condition reads): the
    after region's arguments then skip it, its yield does not."""
    for k in range(len(before.arguments)):
        copy = copy_of_carry(passed, before, k)
        if copy is not None:
            return k, copy
    if isinstance(passed.owner, ir.Block) and passed.owner == before \
            and _passed_once(passed, condition, j):
        return passed.arg_number, None
    return None, None


def _passed_once(carry: ir.Value, condition: ir.Operation, j: int) -> bool:
    """Whether the condition passes ``carry`` (handed over already) at ``j`` alone."""
    return [use.operand_number for use in carry.uses if use.owner == condition] == [1 + j]


def _own_buffer(loop: ir.Operation, yielded: list[ir.Value], k: int, after: ir.Block) -> ir.Value | None:
    """The static ``memref.alloc`` the after region yields at ``k`` (or a reshape
    of all of), used only inside the after region and by no other yielded value."""
    buffer = whole(yielded[k])
    owner = buffer.owner
    if isinstance(owner, ir.Block) or owner.name != "memref.alloc" or len(owner.operands):
        return None
    if owner.operation.block != after and not _inside(loop, owner.operation.block):
        return None
    if not all(_inside(use.owner, after) for use in buffer.uses) or not _stays_put(buffer):
        return None
    if any(base(other) == buffer for j, other in enumerate(yielded) if j != k):
        return None
    return buffer


def _stays_put(buffer: ir.Value) -> bool:
    """Whether no op but a view makes a new name for ``buffer`` (an inner loop's
    result, a callee's returned buffer): the yield at its position is its only way out."""
    for use in buffer.uses:
        user = use.owner
        names = [r for r in user.results if isinstance(r.type, ir.MemRefType)]
        if names and (user.name not in VIEWS or use.operand_number != 0):
            return False
        if any(not _stays_put(r) for r in names):
            return False
    return True


def _inside(op: ir.Operation, block: ir.Block) -> bool:
    """Whether ``op`` lies in ``block`` at any depth (within its function)."""
    op = op.operation
    while True:
        if op.block == block:
            return True
        parent = op.parent
        if parent is None or parent.name in ("builtin.module", "func.func"):
            return False
        op = parent


def _alternate(loop: ir.Operation, buffer: ir.Value, after: ir.Block, k: int) -> None:
    """Both buffers before the loop; the after region writes the one its carry is not."""
    allocation = buffer.owner.operation
    # next to the loop, not where buffer-loop-hoisting put it: hoisted out of an
    # enclosing loop, the buffers would be the same for that loop's trips, and
    # this loop's result (now one of them) would change under the trips after
    allocation.move_before(loop)
    second = allocation.clone(ip=ir.InsertionPoint(loop)).results[0]
    uses = [(use.owner, use.operand_number) for use in buffer.uses]
    with ir.InsertionPoint.at_block_begin(after), loop.location:
        same = ir.Operation.create("arith.cmpi", results=[ir.IntegerType.get_signless(1)],
                                   operands=[_pointer(after.arguments[k]), _pointer(buffer)],
                                   attributes={"predicate": ir.IntegerAttr.get(
                                       ir.IntegerType.get_signless(64), 0)}).results[0]   # eq
        chosen = ir.Operation.create("arith.select", results=[buffer.type],
                                     operands=[same, second, buffer]).results[0]
    for user, number in uses:
        user.operands[number] = chosen


def _pointer(value: ir.Value) -> ir.Value:
    return ir.Operation.create("memref.extract_aligned_pointer_as_index", results=[ir.IndexType.get()],
                               operands=[value]).results[0]
