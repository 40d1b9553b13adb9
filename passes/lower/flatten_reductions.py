"""xla-flatten-reductions: neighbouring dims of a reduce merged, by reshapes."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class FlattenReductions(ModulePass):
    """Merge runs of neighbouring dims that a `stablehlo.reduce` treats alike
    (all reduced, or all kept) into one dim, with reshapes (free on row-major
    tensors) before and after.

    Why: the CPU schedules take reductions over the innermost dim (rows) and
    over the one before it (columns); a bias gradient reduces a 4-D tensor
    over its three leading dims and ran as scalar loops. Merged, it is a
    column reduction of a 2-D tensor. Example: reduce(64x14x14x32, dims
    [0, 1, 2]) becomes reduce(reshape to 12544x32, dims [0]).

    Reduced dims apart from each other (a group norm's mean: 2x32x32x32x4 over
    dims [1, 2, 4], height and width and the channels of a group) cannot
    merge: such a reduce of one input by add (its init zero), max or min is
    split in two, the outer reduced dims first (a column reduction, the kept
    inner dims as its vector), then the innermost ones (short rows). The
    U-Net's group norms ran as scalar loops, 4.7 of its 54 ms.
    """

    name = "xla-flatten-reductions"

    def run(self, module: ir.Operation) -> None:
        # the reduces first: a split erases a reduce and the ops of its body
        for op in [op for op in module_ops(module) if op.name == "stablehlo.reduce"]:
            _flatten(_split(op))


_IDEMPOTENT = ("stablehlo.maximum", "stablehlo.minimum")


def _split(op: ir.Operation) -> ir.Operation:
    """``op`` as two reduces when its reduced dims form several runs apart
    (the outer runs first, then the last): the second one, which the caller
    flattens; else ``op`` itself."""
    if len(op.results) != 1 or not _splittable(op):
        return op
    (value, init), shape = op.operands, ir.RankedTensorType(op.operands[0].type).shape
    reduced = sorted(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    runs = [g for g in _groups(len(shape), set(reduced)) if g[0] in reduced]
    if len(runs) < 2:
        return op
    outer = [d for run in runs[:-1] for d in run]
    kept_shape = [size for d, size in enumerate(shape) if d not in outer]
    last = [d - sum(1 for o in outer if o < d) for d in runs[-1]]
    element = ir.RankedTensorType(value.type).element_type
    with ir.InsertionPoint(op), op.location:
        first = _reduce_like(op, value, init, outer, ir.RankedTensorType.get(kept_shape, element))
        second = _reduce_like(op, first.results[0], init, last, op.results[0].type)
    op.results[0].replace_all_uses_with(second.results[0])
    op.erase()
    _flatten(first)
    return second


def _splittable(op: ir.Operation) -> bool:
    """One input of a static float or integer type, reduced by add with a zero
    init, or by max or min (which an init seen twice does not change)."""
    value_type = ir.RankedTensorType(op.operands[0].type)
    element = str(value_type.element_type)
    if not value_type.has_static_shape or element not in ("f32", "f64", "i32", "i64"):
        return False
    body = [inner.operation for inner in op.regions[0].blocks[0].operations]
    if len(body) != 2 or body[1].name != "stablehlo.return":
        return False
    block = op.regions[0].blocks[0]
    if list(body[0].operands) not in ([block.arguments[0], block.arguments[1]],
                                      [block.arguments[1], block.arguments[0]]):
        return False
    if body[0].name in _IDEMPOTENT:
        return True
    return body[0].name == "stablehlo.add" and _is_zero(op.operands[1])


def _is_zero(value: ir.Value) -> bool:
    """Whether ``value`` is a constant zero (either sign: adding it twice changes
    nothing a sum with it once would not)."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.constant":
        return False
    attr = ir.DenseElementsAttr(owner.attributes["value"])
    if not attr.is_splat:
        return False
    splat = attr.get_splat_value()
    if isinstance(splat, ir.FloatAttr):
        return splat.value == 0.0
    return isinstance(splat, ir.IntegerAttr) and splat.value == 0


def _reduce_like(op: ir.Operation, value: ir.Value, init: ir.Value, dims: list[int],
                 result: ir.Type) -> ir.Operation:
    """A reduce of ``value`` over ``dims`` with ``op``'s reducer (a copy of its body)."""
    new = ir.Operation.create("stablehlo.reduce", results=[result], operands=[value, init],
                              attributes={"dimensions": ir.DenseI64ArrayAttr.get(dims)},
                              regions=1)
    source = op.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*[a.type for a in source.arguments])
    mapping = dict(zip(source.arguments, block.arguments))
    with ir.InsertionPoint(block):
        for inner in source.operations:
            copy = inner.operation.clone()
            for index, operand in enumerate(copy.operands):
                if operand in mapping:
                    copy.operands[index] = mapping[operand]
            for old, fresh in zip(inner.operation.results, copy.results):
                mapping[old] = fresh
    return new


def _groups(rank: int, reduced: set[int]) -> list[list[int]]:
    groups: list[list[int]] = []
    for dim in range(rank):
        if groups and (groups[-1][-1] in reduced) == (dim in reduced):
            groups[-1].append(dim)
        else:
            groups.append([dim])
    return groups


def _flatten(op: ir.Operation) -> None:
    """``op`` with its runs of reduced or kept dims merged (reshapes around it)."""
    count = len(op.results)
    inputs, inits = list(op.operands)[:count], list(op.operands)[count:]
    types = [ir.RankedTensorType(v.type) for v in inputs]
    if not all(t.has_static_shape for t in types):
        return
    shape = types[0].shape
    reduced = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    groups = _groups(len(shape), reduced)
    if len(groups) == len(shape):
        return
    merged = [math.prod(shape[d] for d in group) for group in groups]
    dims = [i for i, group in enumerate(groups) if group[0] in reduced]
    kept = [size for i, size in enumerate(merged) if i not in dims]
    with ir.InsertionPoint(op), op.location:
        flat = [_reshape(v, merged, t.element_type) for v, t in zip(inputs, types)]
        results = [ir.RankedTensorType.get(kept, t.element_type) for t in types]
        new = ir.Operation.create("stablehlo.reduce", results=results, operands=flat + inits,
                                  attributes={"dimensions": ir.DenseI64ArrayAttr.get(dims)},
                                  regions=1)
        op.regions[0].blocks[0].append_to(new.regions[0])
    with ir.InsertionPoint(op), op.location:
        for old, value in zip(op.results, new.results):
            shaped = ir.RankedTensorType(old.type)
            old.replace_all_uses_with(_reshape(value, shaped.shape, shaped.element_type))
    op.erase()


def _reshape(value: ir.Value, shape, element) -> ir.Value:
    result = ir.RankedTensorType.get(list(shape), element)
    if value.type == result:
        return value
    return ir.Operation.create("stablehlo.reshape", results=[result], operands=[value]).result
