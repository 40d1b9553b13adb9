"""Each op xla-apply-schedules plans for, in a function of its own while the
schedules apply.

Why: upstream `transform.structured.fuse_into_containing_op` builds its
"could not fuse" remark before it tries, printing the producer, and printing
an op numbers and verifies the whole function around it. With every kernel
in the entry, each fusion of a fill or a row group's producer cost time in
proportion to the program: xla-apply-schedules grew with the square of it
(transpose/dot chain: 125 ops 0.42 s, 250 ops 1.5 s, 500 ops 6.0 s). In a
function of its own, an op's print is its kernel's.

The functions stay through bufferization, one per distinct kernel, and
xla-inline-schedule-calls puts a copy back at each call on the way to LLVM:
bufferization and the passes around it see each of a transformer's repeated
kernels once (ViT: 234 calls of 43 functions; its one-shot bufferization,
buffer deallocation and canonicalization went 0.36 -> 0.09 s). A kernel's
destination (its `tensor.empty`) stays in the caller and is passed in, so the
kernel's result is that argument's buffer (drop-equivalent-buffer-results
then drops the result) and the caller's empties can share buffers as before.
"""

from __future__ import annotations

import re

from xlac.mlir import ir, passmanager
from xlac.passes.base import functions, nested_ops, symbol_name
from xlac.passes.outline import inline_calls, outline_ops

SCHEDULE_CALL = "xla.schedule_call"
_BACK = "xla.schedule_back"     # a call whose kernel goes back in place before bufferization
_STEM = "xla_scheduled"
_INITS = ("tensor.empty", "linalg.fill", "tensor.pad")   # moved in with the op that alone reads them
# Ops that make a view of a tensor: two call operands viewing one tensor alias.
_VIEWS = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.extract_slice", "tensor.cast")

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
    calls = [outline_ops(module, ops, _fresh(taken, index), {SCHEDULE_CALL: unit})
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


def is_schedule_call(op: ir.Operation) -> bool:
    """Whether ``op`` calls a function ``outline_planned`` made (bufferization
    drops the calls' marker attribute; the callee's name is kept)."""
    return op.name == "func.call" and \
        ir.FlatSymbolRefAttr(op.attributes["callee"]).value.startswith(_STEM + "_")


def keep_planned(module: ir.Operation, window: int = SHARED_EMPTY_WINDOW, cleaned: bool = False) -> None:
    """Leave the functions for bufferization, except the kernels
    bufferization would copy an operand or a result of, which go back in
    place; canonicalize merges the constants each function had a copy of;
    each run of ``window`` kernels shares its empty tensors (those of the
    kernels put back too: a fused row group's temporary then shares its
    output's buffer); no call is given two views of one tensor.
    ``cleaned``: every function went through ``@xla_cleanup`` since it was
    last changed (see ``canonicalize_callers``)."""
    # marked by an attribute, not kept in a set: an op's hash in the bindings
    # covers its operands, which the rewrites below change
    unit = ir.UnitAttr.get(module.context)
    backs = 0
    for call in _schedule_calls(module):
        back = _reads_slice(call) or _returned(call)
        if back:
            call.attributes[_BACK] = unit
            backs += 1
        _fresh_empty_operands(call, as_viewed=back)   # CSE made one empty of each type
    if backs:                       # each inline_calls walks the whole module
        inline_calls(module, _BACK)
    canonicalize_callers(module, cleaned)
    for func in functions(module):
        for block in func.regions[0].blocks:
            share_empty_tensors(block, window)
    aliased = [call for call in _schedule_calls(module) if not _operands_apart(call)]
    for call in aliased:
        call.attributes[_BACK] = unit
    if aliased:
        inline_calls(module, _BACK)


def canonicalize_callers(module: ir.Operation, cleaned: bool) -> None:
    """Canonicalize the module; when ``cleaned``, only its functions that are
    not kernels.

    Why: ``@xla_cleanup`` ends with the canonicalization patterns over the
    whole module, run to a fixed point, and nothing since has touched a
    kernel (the calls' operands and the kernels put back in place are the
    callers' ops): canonicalize found nothing to do in the kernels, which are
    most of the module's ops (ViT: ~1,700 of ~2,000), and cost ~75% of the
    pass's 8-12 ms. A module no schedule was committed to is canonicalized whole."""
    functions_ = [op.operation for op in module.regions[0].blocks[0].operations]
    with module.context:
        if not cleaned or any(op.name != "func.func" for op in functions_ if op.regions):
            passmanager.PassManager.parse("builtin.module(canonicalize)").run(module)
            return
        per_function = passmanager.PassManager.parse("func.func(canonicalize)")
        for func in functions_:
            if func.name == "func.func" and not is_kernel(func):
                per_function.run(func)


def is_kernel(op: ir.Operation) -> bool:
    """Whether ``op`` is a function ``outline_planned`` made (named as ``_fresh`` names them)."""
    return symbol_name(op).startswith(_STEM + "_")


def _schedule_calls(module: ir.Operation) -> list[ir.Operation]:
    return [op for op in nested_ops(module) if op.name == "func.call" and SCHEDULE_CALL in op.attributes]


def _reads_slice(call: ir.Operation) -> bool:
    """Whether an operand is a slice of a larger tensor: a function's argument
    has the identity layout, so bufferization would copy a strided slice
    (GPT-2's query, key and value, columns of one matmul's output) into a
    buffer of its own before each call; in place, the kernel reads it as it lies."""
    return any(view.name == "tensor.extract_slice"
               for value in call.operands for view in _view_chain(value)[0])


def _returned(call: ir.Operation) -> bool:
    """Whether a result is returned (through views): in place, the kernel
    writes into the caller's output buffer; through a call, bufferization
    gives it a buffer of its own and copies that into the output."""
    values = list(call.results)
    while values:
        value = values.pop()
        for use in value.uses:
            owner = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if owner.name == "func.return":
                return True
            if owner.name in _VIEWS:
                values.extend(owner.results)
    return False


def _fresh_empty_operands(call: ir.Operation, as_viewed: bool) -> None:
    """Give each operand of ``call`` that views an empty tensor a fresh empty
    of its own: of the operand's type (shared below with the others of that
    type), or ``as_viewed``, a copy of the empty and its views (a kernel going
    back in place: a returned result stays a view of its buffer, which then
    becomes the output; GPT-2's logits were copied into it otherwise).

    Why: the linalg stage's CSE leaves one `tensor.empty` per type for the
    whole program; passed to every kernel, one-shot bufferization checked each
    write against every use of it (a 1,000-op transpose/dot chain: 14.8 s;
    shared in windows below, 0.1 s)."""
    for index, value in enumerate(list(call.operands)):
        chain, root = _view_chain(value)
        if not _static_empty(root):
            continue
        if as_viewed:
            call.operands[index] = _clone_view(chain, root, call)
        elif ir.RankedTensorType(value.type).has_static_shape:
            call.operands[index] = _empty_like(value, call)


def _empty_like(value: ir.Value, before: ir.Operation) -> ir.Value:
    with before.location:
        return ir.Operation.create("tensor.empty", results=[value.type],
                                   ip=ir.InsertionPoint(before)).results[0]


def _static_empty(value: ir.Value) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation.name == "tensor.empty" \
        and not owner.operation.operands


def _clone_view(chain: list[ir.Operation], root: ir.Value, before: ir.Operation) -> ir.Value:
    """A copy of ``root``'s op and of the views ``chain`` makes of it, before ``before``."""
    fresh = root.owner.operation.clone(ir.InsertionPoint(before)).results[0]
    for view in reversed(chain):
        copy = view.clone(ir.InsertionPoint(before))
        copy.operands[0] = fresh
        fresh = copy.results[0]
    return fresh


def _operands_apart(call: ir.Operation) -> bool:
    """Give each operand of ``call`` that views the same tensor as an earlier
    one a fresh empty tensor of its own, where it views an empty one; whether
    no two operands alias now.

    Why: one-shot bufferization checks a call's written operands against
    later reads, not against the call's other operands. Shared empties (and
    CSE) made a layer norm's two row temporaries one tensor passed twice; the
    kernel wrote both into one buffer (GPT-2's logits off by 0.08).
    """
    seen: set = set()
    for index, value in enumerate(list(call.operands)):
        chain, root = _view_chain(value)
        if root not in seen:
            seen.add(root)
            continue
        if not _static_empty(root):
            return False
        call.operands[index] = _clone_view(chain, root, call)
    return True


def _view_chain(value: ir.Value) -> tuple[list[ir.Operation], ir.Value]:
    """The view ops ``value`` comes through (outermost first) and the tensor they view."""
    chain = []
    while not isinstance(value.owner, ir.Block) and value.owner.operation.name in _VIEWS:
        chain.append(value.owner.operation)
        value = value.owner.operation.operands[0]
    return chain, value


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
        _add_inits(op, chosen, block, roots | _destinations(root))
    for member in members:
        _add_reshapes_to(member, chosen, block)
    ops = sorted(chosen, key=lambda op: place[op])
    last = place[ops[-1]]
    for op in ops:
        for result in op.results:
            for use in result.uses:
                user = _ancestor_in(block, use.owner.operation)
                if user not in chosen and (user is None or place.get(user, last + 1) < last):
                    return None
    return ops


def _destinations(root: ir.Operation) -> set[ir.Operation]:
    """The empty tensors ``root`` writes its results into (through its fills):
    they stay in the caller and are passed in, so each result is the buffer
    the caller passed. A member's or a fill's own temporaries move in."""
    found = set()
    for value in list(root.operands)[len(root.operands) - len(root.results):]:
        owner = value.owner
        while not isinstance(owner, ir.Block) and owner.operation.name == "linalg.fill":
            owner = owner.operation.operands[-1].owner
        if not isinstance(owner, ir.Block) and owner.operation.name == "tensor.empty":
            found.add(owner.operation)
    return found


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


def _add_reshapes_to(member: ir.Operation, chosen: set, block: ir.Block) -> None:
    """Add the reshapes of ``member``'s results that only chosen ops read: a
    matmul's C reaches its epilogue through the expand_shape of its rows
    (epilogue_plan.py), and left outside, that read between the two kept the
    group from moving into a function (every layer's copy scheduled again)."""
    for result in member.results:
        for use in result.uses:
            reshape = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if reshape.name in _RESHAPES and reshape.block == block and all(
                    _ancestor_in(block, inner.owner.operation) in chosen
                    for value in reshape.results for inner in value.uses):
                chosen.add(reshape)


_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")


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
