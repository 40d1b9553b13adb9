"""xla-lower-sort: stablehlo.sort as a merge sort in scf loops on tensors."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, nested_ops
from xlac.passes.sort_kernel import SortSignature, helper_module_text


@dataclass(frozen=True)
class LowerSort(ModulePass):
    """Replace each `stablehlo.sort` by a call to a generated merge-sort helper.

    Why: upstream stablehlo-legalize-to-linalg has no pattern for sort. The
    helper (see sort_kernel.py) views the operands as [rows, n] with the sort
    dimension last, merge-sorts an index permutation per row and gathers every
    operand through it. The sort's comparator region becomes a private
    function on 0-d tensors that the helper calls; the `inline` pass that
    follows puts it back in the loops. The merge is stable, so `is_stable`
    holds whatever its value, and NaN order is whatever the comparator says.

    Example:
        %r = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({...}) : ...
    becomes
        %r = call @xla_sort_0(%x) : (tensor<5xf32>) -> tensor<5xf32>
    """

    name = "xla-lower-sort"

    def run(self, module: ir.Operation) -> None:
        sorts = [op for op in nested_ops(module) if op.name == "stablehlo.sort"]
        taken = _symbols(module)
        for op in sorts:
            helper = _fresh_name(taken, "xla_sort")
            _lower(module, op, helper)


def _symbols(module: ir.Operation) -> set[str]:
    return {ir.StringAttr(op.attributes["sym_name"]).value
            for op in module.regions[0].blocks[0].operations
            if "sym_name" in op.attributes}


def _fresh_name(taken: set[str], stem: str) -> str:
    """``stem_<k>`` for the first k whose helper, kernel and comparator names are free."""
    index = 0
    while {f"{stem}_{index}{suffix}" for suffix in ("", "_rows", "_cmp")} & taken:
        index += 1
    name = f"{stem}_{index}"
    taken.update({name, name + "_rows", name + "_cmp"})
    return name


def _lower(module: ir.Operation, op: ir.Operation, helper: str) -> None:
    captures = _captured_values(op)
    sig = _signature(op, helper, captures)
    with op.context, op.location:
        parsed = ir.Module.parse(helper_module_text(sig))
    functions = list(parsed.body.operations)
    body = module.regions[0].blocks[0]
    for function in functions:
        body.append(function.operation)
    _fill_comparator(op, functions[-1].operation, captures)
    _replace_with_call(op, helper, captures)


def _captured_values(op: ir.Operation) -> list[ir.Value]:
    """Values the comparator uses but does not define (e.g. constants CSE hoisted)."""
    captures: list[ir.Value] = []
    for inner in nested_ops(op):
        for value in inner.operands:
            if not _defined_inside(value, op) and value not in captures:
                captures.append(value)
    return captures


def _defined_inside(value: ir.Value, op: ir.Operation) -> bool:
    owner = value.owner
    parent = owner.owner if isinstance(owner, ir.Block) else owner
    parent = parent.operation
    while parent is not None:
        if parent == op:
            return True
        parent = parent.parent.operation if parent.parent is not None else None
    return False


def _signature(op: ir.Operation, helper: str, captures: list[ir.Value]) -> SortSignature:
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    if any(not t.has_static_shape for t in types):
        raise PassFailure(op.location, "stablehlo.sort with dynamic shapes is not supported; "
                          "run stablehlo-refine-shapes first")
    dimension = ir.IntegerAttr(op.attributes["dimension"]).value
    rank = len(types[0].shape)
    if dimension < 0:
        dimension += rank
    if not 0 <= dimension < rank:
        raise PassFailure(op.location, f"sort dimension {dimension} is out of range "
                          f"for rank {rank}")
    return SortSignature(helper, tuple(types[0].shape),
                         tuple(str(t.element_type) for t in types), dimension,
                         tuple(str(v.type) for v in captures))


def _fill_comparator(op: ir.Operation, function: ir.Operation,
                     captures: list[ir.Value]) -> None:
    """Move the sort's comparator region into the skeleton ``function``."""
    source = op.regions[0].blocks[0]
    target = function.regions[0].blocks[0]
    placeholder, ret = list(target.operations)
    count = len(source.arguments)
    for old, new in zip(source.arguments, target.arguments):
        old.replace_all_uses_with(new)
    ops = list(source.operations)
    for inner in ops[:-1]:
        inner.operation.move_before(placeholder)
    for inner in nested_ops(function):
        for outer, new in zip(captures, list(target.arguments)[count:]):
            inner.replace_uses_of_with(outer, new)
    terminator = ops[-1].operation
    ret.operation.replace_uses_of_with(placeholder.result, terminator.operands[0])
    terminator.erase()
    placeholder.operation.erase()


def _replace_with_call(op: ir.Operation, helper: str, captures: list[ir.Value]) -> None:
    with op.context, op.location, ir.InsertionPoint(op):
        call = ir.Operation.create(
            "func.call", results=[r.type for r in op.results],
            operands=list(op.operands) + captures,
            attributes={"callee": ir.FlatSymbolRefAttr.get(helper)})
    for old, new in zip(op.results, call.results):
        old.replace_all_uses_with(new)
    op.erase()
