"""Lowering an op to a call of a private helper function written as text.

The bindings have no builders for StableHLO ops, so xlac's lowerings write a
helper `func.func` as MLIR text (scf/tensor/arith/linalg, or simpler
StableHLO), parse it into the module and replace the op by a `func.call`;
the `inline` pass that follows folds the helper back in. An op's regions
(comparators, update functions) become private functions the helper calls.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import PassFailure, nested_ops, symbol_name


def region_declaration(region: ir.Region, name: str) -> str:
    """A private declaration of ``@name`` with the type of a one-block region."""
    block = region.blocks[0]
    terminator = list(block.operations)[-1]
    args = ", ".join(str(arg.type) for arg in block.arguments)
    results = ", ".join(str(v.type) for v in terminator.operands)
    return f"func.func private @{name}({args}) -> ({results})\n"


def _move_region_into(func: ir.Operation, region: ir.Region) -> None:
    """Give the declaration ``func`` the body of ``region`` (which is emptied)."""
    block = region.blocks[0]
    terminator = list(block.operations)[-1]
    with terminator.location:
        entry = ir.Block.create_at_start(func.regions[0], [a.type for a in block.arguments])
        with ir.InsertionPoint(entry):
            ret = ir.Operation.create("func.return", operands=list(terminator.operands))
    for old, new in zip(block.arguments, entry.arguments):
        old.replace_all_uses_with(new)
    for inner in list(block.operations)[:-1]:
        inner.move_before(ret)
    _copy_captured_constants(func, entry)


def _copy_captured_constants(func: ir.Operation, entry: ir.Block) -> None:
    """Give ``func`` its own copy of each outside constant its body uses.

    Why: CSE may merge a region's constant with an equal one outside the op
    (the regions are not isolated), but a function must be.
    """
    first = list(entry.operations)[0]
    for inner in nested_ops(func):
        for value in inner.operands:
            owner = value.owner
            is_argument = isinstance(owner, ir.Block)
            if _inside((owner.owner if is_argument else owner).operation, func):
                continue
            if is_argument or owner.name not in ("stablehlo.constant", "arith.constant"):
                raise PassFailure(inner.location, f"'{inner.name}' in a region uses a value "
                                  "defined outside it; only constants are supported")
            copy = owner.operation.clone(ir.InsertionPoint(first))
            inner.replace_uses_of_with(value, copy.result)


def _inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    while op is not None:
        if op == ancestor:
            return True
        op = op.parent.operation if op.parent is not None else None
    return False


def replace_with_call(module: ir.Operation, op: ir.Operation, text: str, name: str,
                      bodies: dict[str, ir.Region] | None = None) -> None:
    """Parse helper ``@name`` from ``text`` into ``module``; call it in place of ``op``.

    ``text`` may declare functions named in ``bodies``; each gets its region.
    """
    bodies = bodies or {}
    helper_module = ir.Module.parse(text, context=module.context)
    for helper in list(helper_module.body.operations):
        helper = helper.operation
        if symbol_name(helper) in bodies:
            _move_region_into(helper, bodies[symbol_name(helper)])
        helper.move_before(_module_end(module))
    with ir.InsertionPoint(op), op.location:
        call = ir.Operation.create(
            "func.call", results=[r.type for r in op.results], operands=list(op.operands),
            attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
    for old, new in zip(op.results, call.results):
        old.replace_all_uses_with(new)
    op.erase()


def fresh_symbol(module: ir.Operation, stem: str) -> str:
    """``<stem>_<n>`` with the smallest n that no symbol of ``module`` starts with."""
    taken = [symbol_name(op.operation) for op in _module_body(module).operations
             if "sym_name" in op.operation.attributes]
    index = 0
    while any(name.startswith(f"{stem}_{index}") for name in taken):
        index += 1
    return f"{stem}_{index}"


def _module_body(module: ir.Operation) -> ir.Block:
    return module.regions[0].blocks[0]


def _module_end(module: ir.Operation) -> ir.Operation:
    return list(_module_body(module).operations)[-1].operation
