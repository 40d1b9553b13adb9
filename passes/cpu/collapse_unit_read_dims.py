"""xla-collapse-unit-read-dims: a loop body's read of a tensor with trailing
unit dims reads the tensor without them."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class CollapseUnitReadDims(ModulePass):
    """In a `linalg.generic` body, a `tensor.extract` from a tensor whose
    trailing dims are 1 (read at 0) reads a `tensor.collapse_shape` of it that
    merges them into the last dim longer than 1.

    Why: a gather's indices come as `tensor<256x1xi32>` (the index vector dim,
    jnp.take's and `t[:, i]`'s form); read at `[%j, 0]` with `%j` the
    innermost loop's index, the vectorizer takes the read for a gather (its
    trailing index does not move), so each vector of a column gather's
    results first gathered its 8 or 16 indices from contiguous memory
    (`vpgatherdd`). Without the unit dim the read is `[%j]`: one contiguous
    vector load. A collapse of trailing unit dims moves no data.

        %k = tensor.extract %idx[%j, %c0] : tensor<256x1xi32>
      ->
        %flat = tensor.collapse_shape %idx [[0, 1]] : tensor<256x1xi32> into tensor<256xi32>
        %k = tensor.extract %flat[%j] : tensor<256xi32>
    """

    name = "xla-collapse-unit-read-dims"

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "tensor.extract" and op.parent.name == "linalg.generic":
                kept = _kept_dims(op)
                if kept:
                    _collapse(op, kept)


def _kept_dims(read: ir.Operation) -> int:
    """How many leading dims the read keeps (0: nothing to collapse)."""
    source = read.operands[0]
    tensor = ir.RankedTensorType(source.type)
    shape, indices = list(tensor.shape), list(read.operands)[1:]
    if not tensor.has_static_shape:
        return 0
    kept = len(shape)
    while kept > 0 and shape[kept - 1] == 1 and _is_zero(indices[kept - 1]):
        kept -= 1
    return kept if 0 < kept < len(shape) else 0


def _is_zero(value: ir.Value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return False
    return ir.IntegerAttr(owner.operation.attributes["value"]).value == 0


def _collapse(read: ir.Operation, kept: int) -> None:
    source = read.operands[0]
    tensor = ir.RankedTensorType(source.type)
    rank = tensor.rank
    i64 = ir.IntegerType.get_signless(64, context=read.context)
    groups = [[d] for d in range(kept - 1)] + [list(range(kept - 1, rank))]
    generic = read.parent
    with ir.InsertionPoint(generic), read.location:
        reassociation = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in group])
                                          for group in groups])
        flat_type = ir.RankedTensorType.get(list(tensor.shape)[:kept], tensor.element_type)
        flat = ir.Operation.create("tensor.collapse_shape", results=[flat_type], operands=[source],
                                   attributes={"reassociation": reassociation}).results[0]
    with ir.InsertionPoint(read), read.location:
        new = ir.Operation.create("tensor.extract", results=[tensor.element_type],
                                  operands=[flat, *list(read.operands)[1:kept + 1]])
    read.results[0].replace_all_uses_with(new.results[0])
    read.erase()
