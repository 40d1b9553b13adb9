"""Moving a set of ops into a private function and a call of it, and back.

Passes outline ops so that later work sees them apart (linalg's elementwise
fusion stays inside a kernel; a schedule's diagnostics print one kernel, not
the program) and then, where the split has done its job, inline them again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from xlac.mlir import ir
from xlac.passes.base import nested_ops, symbol_name
from xlac.passes.helper_calls import captured_values

_CONSTANTS = ("stablehlo.constant", "arith.constant")


def is_constant(value: ir.Value) -> bool:
    return not isinstance(value.owner, ir.Block) and value.owner.operation.name in _CONSTANTS


def outline_ops(module: ir.Operation, ops: Sequence[ir.Operation], name: str,
                call_attributes: dict[str, ir.Attribute],
                copied: Callable[[ir.Value], bool] = is_constant) -> ir.Operation:
    """Move ``ops`` (one block's, in order) into ``func.func private @name``,
    called where the last of them was; return the call.

    Values they read from outside are passed in, except those ``copied``
    says to copy in (constants: an op each, cheaper than an argument); values
    read after them come back as results. The caller makes sure no op
    between the first and the last of ``ops`` reads one of their results.
    """
    known = {r for op in ops for r in op.results}  # their own results, then each value taken
    inner = [nested_ops(op) for op in ops]         # walked once: read here, rewired below
    captured: list[ir.Value] = []
    for op, nested in zip(ops, inner):
        for value in [*op.operands, *captured_values(op, nested)]:
            if value not in known:
                captured.append(value)
                known.add(value)
    copies = [v for v in captured if copied(v)]
    arguments = [v for v in captured if v not in copies]
    members = set(ops)
    results = [r for op in ops for r in op.results
               if any(outside(use.owner, members) for use in r.uses)]
    with ops[-1].location:
        call = ir.Operation.create("func.call", results=[r.type for r in results],
                                   operands=arguments, attributes={
                                       "callee": ir.FlatSymbolRefAttr.get(name),
                                       **call_attributes},
                                   ip=ir.InsertionPoint(ops[-1]))
    for result, new in zip(results, call.results):
        for use in list(result.uses):            # the readers after the ops, not among them
            if outside(use.owner, members):
                use.owner.operands[use.operand_number] = new
    with ops[-1].location:
        func = _function(module, name, arguments, results)
    entry = func.regions[0].blocks[0]
    end = list(entry.operations)[0].operation
    mapping = dict(zip(arguments, entry.arguments))
    for value in copies:
        clone = value.owner.operation.clone(ir.InsertionPoint(end))
        mapping[value] = clone.results[0]
    for op, nested in zip(ops, inner):
        op.move_before(end)
        for each in [op, *nested]:
            for i, value in enumerate(each.operands):
                if value in mapping:
                    each.operands[i] = mapping[value]
    return call


def inline_calls(module: ir.Operation, marker: str | Callable[[ir.Operation], bool]) -> int:
    """Put back the body of each function called by a call carrying ``marker``
    (an attribute name, or a test of the call) in place of its call, and
    erase it; how many calls. A function called more than once is copied for
    each call but its last, and each copy's ops take their call's location
    (the call stands where its own ops were: a profile names each copy by its
    own source line)."""
    body = module.regions[0].blocks[0]
    by_name = {symbol_name(op.operation): op.operation for op in body.operations
               if op.operation.name == "func.func"}
    marked = marker if callable(marker) else lambda call: marker in call.attributes
    every_call = [op for op in nested_ops(module) if op.name == "func.call"]
    calls = [op for op in every_call if marked(op)]
    # a function some unmarked call still calls is copied for every marked one
    left = Counter(name for call in every_call
                   if (name := ir.FlatSymbolRefAttr(call.attributes["callee"]).value) in by_name)
    shared = {name for name, count in left.items() if count > 1}
    for call in calls:
        name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        left[name] -= 1
        inline_call(call, by_name[name] if left[name] else by_name.pop(name), bool(left[name]),
                    name in shared)
    return len(calls)


def inline_call(call: ir.Operation, func: ir.Operation, copy: bool, relocate: bool,
                erase: bool = True) -> list[ir.Operation]:
    """Put the body of ``func`` (a copy of it when ``copy``, else the function
    itself, erased unless not ``erase``) in place of ``call``; ``relocate``:
    every op put in takes the call's location. The ops put in, in order,
    their return left out."""
    # a whole function's clone: its values remapped inside its regions too
    func = func.clone(ir.InsertionPoint(func.block)) if copy else func
    entry = func.regions[0].blocks[0]
    for argument, operand in zip(entry.arguments, call.operands):
        argument.replace_all_uses_with(operand)
    ops = [op.operation for op in entry.operations]
    for op in ops[:-1]:
        op.move_before(call)
        if relocate:
            for inner in [op, *nested_ops(op)]:
                inner.location = call.location
    for result, value in zip(call.results, ops[-1].operands):
        result.replace_all_uses_with(value)
    call.erase()
    if copy or erase:
        func.erase()
    return ops[:-1]


def clone_ops(ops: Sequence[ir.Operation], mapping: dict) -> None:
    """Clone ``ops`` at the current insertion point, reading ``mapping``'s values
    for theirs; each clone's results are added to ``mapping``."""
    for op in ops:
        clone = op.clone()
        for i, value in enumerate(op.operands):
            if value in mapping:
                clone.operands[i] = mapping[value]
        mapping.update(zip(op.results, clone.results))


def outside(owner, members: set) -> bool:
    """Whether ``owner`` (an op) is neither one of ``members`` nor inside one."""
    op = owner.operation
    while op is not None:
        if op in members:
            return False
        op = op.parent.operation if op.parent is not None else None
    return True


def _function(module: ir.Operation, name: str, arguments: list[ir.Value],
              results: list[ir.Value]) -> ir.Operation:
    types = [v.type for v in arguments]
    func = ir.Operation.create("func.func", regions=1, attributes={
        "sym_name": ir.StringAttr.get(name),
        "sym_visibility": ir.StringAttr.get("private"),
        "function_type": ir.TypeAttr.get(ir.FunctionType.get(types, [r.type for r in results]))})
    ir.InsertionPoint(module.regions[0].blocks[0]).insert(func)
    entry = ir.Block.create_at_start(func.regions[0], types)
    with ir.InsertionPoint(entry):
        ir.Operation.create("func.return", operands=results)   # the ops move in before it
    return func


class FirstAlike:
    """Finds, for each function made, an earlier one with the same text, printing
    a function only when an earlier one has the same ``key``: what any two with
    the same text have alike (their type, how many ops they hold...). Why:
    xla-outline-kernels printed every kernel it made to compare it (44 on ViT, 160
    on the CNN training step), and about half share their key with no other."""

    def __init__(self):
        self._earlier: dict[tuple, list[list]] = {}

    def first(self, key: tuple, item, text: Callable[[], str]):
        """The earlier item whose ``text()`` this one's equals, else None (and
        ``item`` is kept for those after it). ``text`` is called at most once."""
        earlier = self._earlier.setdefault(key, [])
        mine = None
        for entry in earlier:                  # [item, its text(), its text or None]
            if entry[2] is None:
                entry[2] = entry[1]()
            if mine is None:
                mine = text()
            if entry[2] == mine:
                return entry[0]
        earlier.append([item, text, mine])
        return None
