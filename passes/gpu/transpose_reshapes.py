"""An elementwise generic split into heads (``tensor.expand_shape`` of its result, read by
nothing else) computed on the split shape instead, so the transpose after the split reads
the generic itself and fuses with it.

BERT's and ViT's projections are `matmul`, a bias add (a generic whose bias is read
through a broadcast map with constants, `(d0, d1, d2) -> (0, 0, d2)`), an expand_shape
into heads and a transpose for the batch matmul (`[0, 2, 3, 1]`: K^T per head,
`[0, 2, 1, 3]`: V). Upstream `linalg-fuse-elementwise-ops` moves a reshape through a
generic only when every map is a projected permutation, constants excluded, so each
transpose stayed a kernel of its own. A map result that is a constant reads a size-1 dim:
it stays one dim of the split operand, which is all the rewrite needs to know.
"""

from __future__ import annotations

import re

from xlac.mlir import dialect, ir


def split_generic(split) -> ir.Operation | None:
    """Rewrite ``expand_shape(generic(xs))`` as ``generic(expand_shape(xs))`` (the
    generic on the split shape); the new generic, or None where it does not apply."""
    generic = split.operands[0].owner
    groups = reassociation_groups(split.attributes["reassociation"])
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    if not _splittable(generic, maps):
        return None
    result_type = ir.RankedTensorType(split.results[0].type)
    with ir.InsertionPoint(split), split.location:
        new_dims = _new_dims(groups)
        inputs, input_maps = [], []
        for value, affine_map in zip(generic.operands[:-1], maps[:-1]):
            operand, read = _split_operand(value, affine_map, groups, new_dims, result_type.shape)
            inputs.append(operand)
            input_maps.append(read)
        init = dialect("tensor").ExpandShapeOp(result_type, generic.operands[-1], split.attributes[
            "reassociation"], [], result_type.shape).result
        rank = result_type.rank
        new = dialect("linalg").GenericOp(
            [result_type], inputs, [init],
            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in input_maps + [ir.AffineMap.get_identity(rank)]]),
            ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank))
        move_body(generic, new)
    split.results[0].replace_all_uses_with(new.results[0])
    split.erase()
    generic.erase()
    return new.operation


def reassociation_groups(reassociation) -> list[list[int]]:
    return [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(group)] for group in ir.ArrayAttr(reassociation)]


def _splittable(generic, maps) -> bool:
    """One result, parallel loops, an identity output map, no `linalg.index`, and
    inputs read at dims or at constant 0."""
    iterators = [str(t) for t in ir.ArrayAttr(generic.attributes["iterator_types"])]
    if len(generic.results) != 1 or any("parallel" not in t for t in iterators):
        return False
    if str(maps[-1]) != str(ir.AffineMap.get_identity(maps[-1].n_dims)):
        return False
    if any(op.name == "linalg.index" for op in generic.regions[0].blocks[0].operations):
        return False
    return all(re.fullmatch(r"d\d+|0", str(e)) for m in maps[:-1] for e in m.results)


def _new_dims(groups) -> list[list[ir.AffineExpr]]:
    rank = sum(len(g) for g in groups)
    dims = [ir.AffineDimExpr.get(d) for d in range(rank)]
    return [[dims[d] for d in group] for group in groups]


def _split_operand(value, affine_map, groups, new_dims, split_shape):
    """The operand on the split shape (an expand_shape where a dim it reads is split)
    and the map reading it from the split loops."""
    shape = ir.RankedTensorType(value.type).shape
    results, reassociation, out_shape = [], [], []
    for position, expr in enumerate(affine_map.results):
        text = str(expr)
        if text == "0":
            results.append(ir.AffineConstantExpr.get(0))
            reassociation.append([len(out_shape)])
            out_shape.append(shape[position])
            continue
        group = groups[int(text[1:])]
        results.extend(new_dims[int(text[1:])])
        reassociation.append(list(range(len(out_shape), len(out_shape) + len(group))))
        out_shape.extend(split_shape[d] for d in group)
    read = ir.AffineMap.get(sum(len(g) for g in groups), 0, results)
    if out_shape == list(shape):
        return value, read
    element = ir.RankedTensorType(value.type).element_type
    attr = ir.ArrayAttr.get([ir.ArrayAttr.get(
        [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in group]) for group in reassociation])
    operand = dialect("tensor").ExpandShapeOp(ir.RankedTensorType.get(out_shape, element), value,
                                              attr, [], out_shape).result
    return operand, read


def move_body(old, new) -> None:
    """The old generic's body into the new one (same block arguments: a body without
    linalg.index does not see the loops' rank)."""
    old_block = old.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*[a.type for a in old_block.arguments])
    for old_argument, argument in zip(old_block.arguments, block.arguments):
        old_argument.replace_all_uses_with(argument)
    with ir.InsertionPoint(block) as insert:
        for op in list(old_block.operations):
            insert.insert(op.detach_from_parent())
