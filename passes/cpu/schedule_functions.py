"""Each op xla-apply-schedules plans for, in a function of its own while the
schedules apply.

Why: upstream `transform.structured.fuse_into_containing_op` builds its
"could not fuse" remark before it tries, printing the producer, and printing
an op numbers and verifies the whole function around it. With every kernel
in the entry, each fusion of a fill or a row group's producer cost time in
proportion to the program: xla-apply-schedules grew with the square of it
(transpose/dot chain: 125 ops 0.42 s, 250 ops 1.5 s, 500 ops 6.0 s). In a
function of its own, an op's print is its kernel's. The functions are
inlined again once the schedules have applied, before bufferization.
"""

from __future__ import annotations

import re

from xlac.mlir import ir, passmanager
from xlac.passes.base import functions, symbol_name
from xlac.passes.outline import inline_calls, is_constant, outline_ops

SCHEDULE_CALL = "xla.schedule_call"
_STEM = "xla_scheduled"
_INITS = ("tensor.empty", "linalg.fill", "tensor.pad")   # moved in with the op that alone reads them

# Why share, and why only so far: kernels writing into one tensor.empty let
# bufferization reuse one buffer for a kernel whose input is dead (BERT,
# GPT-2: 3-6% faster than a fresh buffer each, whose pages fault anew), but
# its analysis checks each write against every use of the value it aliases:
# one empty for the whole program was quadratic (500-op transpose/dot chain:
# 2.8 s; one per kernel 0.1 s).
SHARED_EMPTY_WINDOW = 32


def outline_planned(module: ir.Operation, planned, share: bool = True) -> list:
    """Move each planned op, with its fused members and the inits only they
    read, into a private function, called where the op was; return the plans
    left to apply.

    With ``share``, functions of one text and one plan are one function,
    called from each place, and only its op is scheduled: a transformer's or
    ResNet's repeated layers cost the interpreter one kernel each (BERT: 176
    planned ops, 49 distinct). Inlining puts a copy back at each call.
    """
    body = module.regions[0].blocks[0]
    taken = {symbol_name(op.operation) for op in body.operations
             if "sym_name" in op.operation.attributes}
    positions: dict = {}
    # All chosen before any is moved: an op's hash in the bindings covers its
    # operands, which moving its neighbours changes, so the sets and maps
    # below hold only until the first edit.
    roots = {root.operation for root, _ in planned}
    kernels = [_kernel_ops(root.operation, [m.operation for m in plan.members], positions, roots)
               for root, plan in planned]
    unit = ir.UnitAttr.get(module.context)
    calls = [outline_ops(module, ops, _fresh(taken, index), {SCHEDULE_CALL: unit}, copied=_copied)
             if ops is not None else None for index, ops in enumerate(kernels)]
    return _share_identical(module, planned, calls) if share else planned


_GROUP_NUMBER = re.compile(r"xla\.fusion_group = \d+ : i64(, )?")


def _share_identical(module: ir.Operation, planned, calls) -> list:
    """Point the calls of each function whose text and plan an earlier one
    has at that one, erase it (and the ops it held), and drop its plan.

    The text is printed whole (no elided constants: two kernels differing in
    a constant's values are two kernels) and without locations or xla-fuse's
    group numbers (read no more past xla-outline-fusions), so layers at other
    lines share.
    """
    by_name = {symbol_name(op.operation): op.operation for op in module.regions[0].blocks[0].operations
               if op.operation.name == "func.func"}
    first: dict[tuple, ir.Attribute] = {}
    kept = []
    for (op, plan), call in zip(planned, calls):
        if call is None:
            kept.append((op, plan))
            continue
        callee = call.attributes["callee"]
        name = ir.FlatSymbolRefAttr(callee).value
        text = by_name[name].get_asm(use_local_scope=True, assume_verified=True)
        key = (_GROUP_NUMBER.sub("", text.replace(f"@{name}(", "@_(", 1)), plan.sequence, plan.params)
        if key in first:
            call.attributes["callee"] = first[key]
            by_name.pop(name).erase()
        else:
            first[key] = callee
            kept.append((op, plan))
    return kept


def inline_planned(module: ir.Operation, window: int = SHARED_EMPTY_WINDOW) -> None:
    """Put the functions back; canonicalize merges the constants each had a
    copy of, and each run of ``window`` kernels shares its empty tensors."""
    if inline_calls(module, SCHEDULE_CALL):
        with module.context:
            passmanager.PassManager.parse("builtin.module(canonicalize)").run(module)
        for func in functions(module):
            for block in func.regions[0].blocks:
                share_empty_tensors(block, window)


def share_empty_tensors(block: ir.Block, window: int) -> None:
    """Replace each static tensor.empty directly in ``block`` by the first
    one of its type, up to ``window`` of them per first one."""
    first: dict[str, tuple[ir.Operation, int]] = {}
    for op in [op.operation for op in block.operations]:
        if op.name != "tensor.empty" or op.operands:
            continue
        key = str(op.results[0].type)
        kept, count = first.get(key, (None, window))
        if count >= window:
            first[key] = (op, 1)
            continue
        op.results[0].replace_all_uses_with(kept.results[0])
        op.erase()
        first[key] = (kept, count + 1)


def _copied(value: ir.Value) -> bool:
    """Constants and static empty tensors: copied into each function that reads them."""
    if is_constant(value):
        return True
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation.name == "tensor.empty" \
        and not owner.operation.operands


def _kernel_ops(root: ir.Operation, members: list[ir.Operation], positions: dict,
                roots: set):
    """The ops to move, in block order; None where they cannot move as one
    (not one block's, or a value of theirs read between them)."""
    block = root.block
    if any(member.block != block for member in members):
        return None
    if block not in positions:
        positions[block] = {op.operation: i for i, op in enumerate(block.operations)}
    place = positions[block]
    chosen = {root, *members}
    for op in list(chosen):
        _add_inits(op, chosen, block, roots)
    ops = sorted(chosen, key=lambda op: place[op])
    last = place[ops[-1]]
    for op in ops:
        for result in op.results:
            for use in result.uses:
                user = _ancestor_in(block, use.owner.operation)
                if user not in chosen and (user is None or place.get(user, last + 1) < last):
                    return None
    return ops


def _add_inits(op: ir.Operation, chosen: set, block: ir.Block, roots: set) -> None:
    """Add the fills and empty tensors ``op`` reads that nothing else reads
    (and that are not scheduled as ops of their own, in ``roots``)."""
    for value in op.operands:
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.operation.name not in _INITS:
            continue
        init = owner.operation
        if init in chosen or init in roots or init.block != block:
            continue
        if all(_ancestor_in(block, use.owner.operation) in chosen
               for result in init.results for use in result.uses):
            chosen.add(init)
            _add_inits(init, chosen, block, roots)


def _ancestor_in(block: ir.Block, op: ir.Operation):
    """``op`` or the op around it that is directly in ``block``; None if none is."""
    while op is not None and op.block != block:
        op = op.parent.operation if op.parent is not None else None
    return op


def _fresh(taken: set[str], index: int) -> str:
    name = f"{_STEM}_{index}"
    while name in taken:
        name += "_"
    taken.add(name)
    return name
