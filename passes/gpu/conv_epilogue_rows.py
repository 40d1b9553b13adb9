"""A convolution matmul's elementwise epilogue computed on the matmul's 2-D result.

`xla-gpu-convolutions-as-matmuls` leaves each convolution a matmul `M x F` (M the
output pixels) expanded back to `N x O.. x F`; ResNet's batch norm/relu(/residual)
reads that 4-D view. The generated matmul kernel applies only an epilogue on C
itself (`matmul_epilogue.find_epilogue`: C among its operands, read at C's own
index), so the view kept it a kernel of its own: 18 of ResNet-18's 57 launches.

Here, on tensors, such a generic becomes one over `M x F` that writes C, its result
expanded after it:

    %v = tensor.expand_shape %c [[0, 1, 2], [3]]
    %r = linalg.generic ins(%v, %scale, %res : 4-D, F, 4-D) outs(%v)
  ->
    %res2 = tensor.collapse_shape %res [[0, 1, 2], [3]]
    %r2 = linalg.generic ins(%c, %scale, %res2 : 2-D, F, 2-D) outs(%c)
    %r = tensor.expand_shape %r2 [[0, 1, 2], [3]]

An input map may read the row dims `d0..d{r-2}` only all together and in order
(they become d0: the operand's positions collapsed) and the channel dim anywhere
(d1); a constant 0 stays a size-1 dim. The collapses go before the matmul where
their sources exist there, so the matmul kernel (which replaces the matmul) can
take them as arguments.
"""

from __future__ import annotations

import re

from xlac.mlir import dialect, ir
from xlac.passes.gpu.transpose_reshapes import move_body, reassociation_groups


def collapse_epilogue(op: ir.Operation, view: ir.Value, matmul: ir.Operation) -> bool:
    """Rewrite ``op`` (reading ``view``, the expand of ``matmul``'s result, as one of
    its inputs) on the matmul's rows, writing the matmul's result; False where the
    maps or the expand do not allow it (``op`` then unchanged)."""
    expand = view.owner
    groups = reassociation_groups(expand.attributes["reassociation"])
    rank = ir.RankedTensorType(view.type).rank
    if groups != [list(range(rank - 1)), [rank - 1]] or rank < 3:
        return False
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    inputs = list(op.operands)[:-1]
    reads = [_collapsed_read(m, rank) for m in maps[:-1]]
    if any(r is None for r in reads) or \
            any(o.name == "linalg.index" for o in op.regions[0].blocks[0].operations):
        return False
    c = matmul.results[0]
    for value in inputs:
        _hoist_reshape(value, matmul)
    collapsed = [c if value == view else _collapse(value, groups_of, matmul, op)
                 for value, (groups_of, _) in zip(inputs, reads)]
    with ir.InsertionPoint(op), op.location:
        new = dialect("linalg").GenericOp(
            [c.type], collapsed, [c],
            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for _, m in reads]
                             + [ir.AffineMapAttr.get(ir.AffineMap.get_identity(2))]),
            ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * 2))
        move_body(op, new)
        shape = ir.RankedTensorType(view.type).shape
        back = dialect("tensor").ExpandShapeOp(view.type, new.results[0], expand.attributes[
            "reassociation"], [], shape).result
    op.results[0].replace_all_uses_with(back)
    op.erase()
    if not list(view.uses):
        expand.erase()
    return True


def _collapsed_read(affine_map, rank: int):
    """(the operand's reassociation, the 2-D map) for a map over ``rank`` dims whose
    row dims ``d0..d{rank-2}`` appear all together in order or not at all; or None."""
    texts = [str(e) for e in affine_map.results]
    if not all(re.fullmatch(r"d\d+|0", t) for t in texts):
        return None
    rows = [f"d{d}" for d in range(rank - 1)]
    groups, results, position = [], [], 0
    while position < len(texts):
        text = texts[position]
        if text == rows[0] and texts[position:position + len(rows)] == rows:
            groups.append(list(range(position, position + len(rows))))
            results.append(ir.AffineDimExpr.get(0))
            position += len(rows)
            continue
        if text in rows:
            return None                 # a row dim alone or out of order: no 2-D form
        groups.append([position])
        results.append(ir.AffineConstantExpr.get(0) if text == "0" else ir.AffineDimExpr.get(1))
        position += 1
    return groups, ir.AffineMap.get(2, 0, results)


def _collapse(value: ir.Value, groups: list[list[int]], matmul, op) -> ir.Value:
    """``value`` collapsed by ``groups`` (itself where nothing merges), inserted
    before the matmul where ``value`` exists there, else before ``op``."""
    if all(len(g) == 1 for g in groups):
        return value
    source = ir.RankedTensorType(value.type)
    shape = [_product(source.shape[d] for d in g) for g in groups]
    attr = ir.ArrayAttr.get([ir.ArrayAttr.get(
        [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in g]) for g in groups])
    with ir.InsertionPoint(matmul if _exists_at(value, matmul) else op), op.location:
        return dialect("tensor").CollapseShapeOp(
            ir.RankedTensorType.get(shape, source.element_type), value, attr).result


def _exists_at(value: ir.Value, matmul) -> bool:
    owner = value.owner
    return isinstance(owner, ir.Block) or (
        owner.operation.block == matmul.operation.block
        and owner.operation.is_before_in_block(matmul.operation))


def _hoist_reshape(value: ir.Value, matmul) -> None:
    """A reshape after the matmul of a value that exists before it (fusion's
    `1x1x1xF` expand of a batch norm parameter) moved before the matmul."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name not in ("tensor.expand_shape",
                                                         "tensor.collapse_shape"):
        return
    if not _exists_at(value, matmul) and _exists_at(owner.operands[0], matmul):
        owner.operation.move_before(matmul.operation)


def _product(sizes) -> int:
    total = 1
    for size in sizes:
        total *= size
    return total
