"""xla-flatten-reductions: neighbouring dims of a reduce merged, by reshapes."""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops


@dataclass(frozen=True)
class FlattenReductions(ModulePass):
    """Merge runs of neighbouring dims that a `stablehlo.reduce` treats alike
    (all reduced, or all kept) into one dim, with reshapes (free on row-major
    tensors) before and after.

    Why: the CPU schedules take reductions over the innermost dim (rows) and
    over the one before it (columns); a bias gradient reduces a 4-D tensor
    over its three leading dims and ran as scalar loops. Merged, it is a
    column reduction of a 2-D tensor. Example: reduce(64x14x14x32, dims
    [0, 1, 2]) becomes reduce(reshape to 12544x32, dims [0]).
    """

    name = "xla-flatten-reductions"

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            if op.name == "stablehlo.reduce":
                _flatten(op)


def _groups(rank: int, reduced: set[int]) -> list[list[int]]:
    groups: list[list[int]] = []
    for dim in range(rank):
        if groups and (groups[-1][-1] in reduced) == (dim in reduced):
            groups[-1].append(dim)
        else:
            groups.append([dim])
    return groups


def _flatten(op: ir.Operation) -> None:
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
