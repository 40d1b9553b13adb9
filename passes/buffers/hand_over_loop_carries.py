"""xla-hand-over-loop-carries: a bufferized while hands each trip's new carry buffer to the next, uncopied."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

# ops that only read the memref operand they are given
_READERS = frozenset({"memref.load", "vector.transfer_read", "vector.load", "vector.maskedload",
                      "vector.gather", "memref.dim", "memref.extract_aligned_pointer_as_index"})
# ops whose first result is a view of their first operand
VIEWS = frozenset({"memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.expand_shape",
                    "memref.collapse_shape", "memref.transpose", "memref.extract_strided_metadata"})
# views of a whole buffer
_RESHAPES = frozenset({"memref.cast", "memref.expand_shape", "memref.collapse_shape"})
_CALL_DEPTH = 4


class HandOverLoopCarries(ModulePass):
    """Drop the copy that one-shot bufferization puts in an ``scf.while``'s
    before region for a carry whose after region computes a new buffer (a
    vector carry: an LSTM's state, an N-body state, ``fori_loop`` on an array).

    Why: one-shot-bufferize copies a carry in the before region unless both
    regions yield it in place, so a carry the body recomputes out of place
    costs an alloc, a copy of the whole carry and a free per trip, on top of
    the body's own new buffer. Handing the body's buffer to the next trip as
    it is is safe when no one writes through the carry inside the loop (the
    before region and the after region only read it) and the buffer yielded
    is the after region's own fresh alloc, yielded once (no other carry or
    outside value aliases it). The init operand is the loop's own (scf.while
    operands bufferize as writes, so one-shot copies what others still read).
    Runs after buffer-results-to-out-params (a kernel call's result is then
    the alloc it writes) and buffer-loop-hoisting (an alloc hoisted out of
    the loop is one buffer for all trips: never handed over), before
    deallocation. Example:

        scf.while (%a = %init) { %n = memref.alloc; memref.copy %a, %n
                                 scf.condition(%p) %n }
        do { ^bb0(%b): %o = memref.alloc; call @kernel(%b, %o); scf.yield %o }
      becomes
        scf.while (%a = %init) { scf.condition(%p) %a }
        do { ^bb0(%b): %o = memref.alloc; call @kernel(%b, %o); scf.yield %o }
    """

    name = "xla-hand-over-loop-carries"
    acts_on = frozenset({"scf.while"})

    def run(self, module: ir.Operation) -> None:
        for_each_while(module, _hand_over)


def for_each_while(module: ir.Operation, rewrite) -> None:
    """``rewrite(loop, functions)`` on every scf.while, ``functions`` the module's by name."""
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op
                 for op in module_ops(module) if op.name == "func.func"}
    for loop in [op for op in module_ops(module) if op.name == "scf.while"]:
        rewrite(loop, functions)


def loop_parts(loop: ir.Operation) -> tuple[ir.Block, ir.Block, ir.Operation, list[ir.Value]]:
    """The before and after blocks, the scf.condition and the values the after region yields."""
    before, after = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
    condition = list(before.operations)[-1].operation
    return before, after, condition, list(list(after.operations)[-1].operation.operands)


def _hand_over(loop: ir.Operation, functions: dict[str, ir.Operation]) -> None:
    before, after, condition, yielded = loop_parts(loop)
    for k, passed in enumerate(list(condition.operands)[1:]):
        copy = copy_of_carry(passed, before, k)
        if copy is None or k >= len(after.arguments) or k >= len(yielded):
            continue
        carry = before.arguments[k]
        if only_read(carry, functions, skip=copy) and only_read(after.arguments[k], functions) \
                and _own_fresh_buffer(yielded, k, after):
            condition.operands[1 + k] = carry
            allocation = passed.owner
            copy.erase()
            allocation.erase()


def copy_of_carry(value: ir.Value, before: ir.Block, k: int) -> ir.Operation | None:
    """The ``memref.copy %carry_k, value`` when ``value`` is a fresh alloc of
    the before region used only by that copy and the condition, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "memref.alloc" or owner.operation.block != before:
        return None
    if k >= len(before.arguments) or before.arguments[k].type != value.type:
        return None
    copies = [use.owner for use in value.uses if use.owner.name == "memref.copy"]
    others = [use.owner for use in value.uses if use.owner.name not in ("memref.copy", "scf.condition")]
    if len(copies) != 1 or others or len(list(value.uses)) != 2:
        return None
    copy = copies[0]
    return copy if copy.operands[1] == value and copy.operands[0] == before.arguments[k] else None


def only_read(value: ir.Value, functions: dict[str, ir.Operation], skip: ir.Operation | None = None,
               depth: int = 0) -> bool:
    """Whether every use of the buffer ``value`` (through views and kernel calls) only reads it."""
    for use in value.uses:
        user, index = use.owner, use.operand_number
        if skip is not None and user == skip:
            continue
        if user.name in _READERS or (user.name == "memref.copy" and index == 0):
            continue
        if user.name in VIEWS and index == 0:
            if not only_read(user.results[0], functions, depth=depth):
                return False
            continue
        if user.name.startswith("linalg.") and "operandSegmentSizes" in user.attributes:
            if index < list(ir.DenseI32ArrayAttr(user.attributes["operandSegmentSizes"]))[0]:
                continue
            return False
        if user.name == "func.call" and depth < _CALL_DEPTH and _callee_reads(user, index, functions, depth):
            continue
        return False
    return True


def _callee_reads(call: ir.Operation, index: int, functions: dict[str, ir.Operation], depth: int) -> bool:
    callee = functions.get(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
    if callee is None or not callee.regions[0].blocks:
        return False
    return only_read(callee.regions[0].blocks[0].arguments[index], functions, depth=depth + 1)


def _own_fresh_buffer(yielded: list[ir.Value], k: int, after: ir.Block) -> bool:
    """Whether the after region yields at ``k`` an alloc of its own (or a reshape
    of all of it) that no other yielded value is or views."""
    allocation = whole(yielded[k])
    owner = allocation.owner
    if isinstance(owner, ir.Block) or owner.name != "memref.alloc" or owner.operation.block != after:
        return False
    return all(base(other) != allocation for j, other in enumerate(yielded) if j != k)


def whole(value: ir.Value) -> ir.Value:
    """The buffer ``value`` reshapes as a whole (a scan's 1 x n row as n), else ``value``."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in _RESHAPES:
        value = value.owner.operands[0]
    return value


def base(value: ir.Value) -> ir.Value:
    while not isinstance(value.owner, ir.Block) and value.owner.name in VIEWS:
        value = value.owner.operands[0]
    return value
