"""xla-split-roll-columns: a loop whose body picks a roll's slice by its
innermost index runs as one loop per stretch of columns, each with its picks
made."""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.cpu.plans.schedule_plan import loop_extents
from xlac.passes.lower.pad_as_slices import insert_slice

MAX_PARTS = 4           # column stretches a loop may split into: each is a kernel of its own


@dataclass(frozen=True)
class SplitRollColumns(ModulePass):
    """Split a `linalg.generic` of parallel loops, whose body branches on
    `innermost index < c` (`scf.if`, a concatenate's pick of its operand),
    along its innermost loop at those constants: one generic per stretch of
    columns, reading and writing its slice of each operand, each branch on
    the innermost index folded to the side its stretch takes, the
    innermost index offset by the stretch's start.

    Why: a roll (`jnp.roll` along the last axis: slices of one tensor side by
    side) fused into its readers' loop picks its slice per element, and the
    pick changes inside a vector; clamped into the slice, the reads vectorize
    as gathers from a strided view, which the vectorizer would index as if
    dense, so such loops ran scalar (jax_shallow_water's three stencil
    kernels, about 40% of a step). Within a stretch each read is a slice at
    `index + constant`: a contiguous load. The two one-column stretches at
    the edges are small loops of their own.

        %r = linalg.generic ... {          // j in [0, 64)
          %t = scf.if (j < 63) { extract %a[i, j] } else { extract %b[i, j - 63] }
        }
      ->
        %r0 = linalg.generic (columns [0, 63)) { extract %a[i, j] }
        %r1 = linalg.generic (columns [63, 64)) { extract %b[i, (j + 63) - 63] }
        inserted into their slices of the result
    """

    name = "xla-split-roll-columns"

    acts_on = frozenset({"linalg.generic"})

    def run(self, module: ir.Operation) -> None:
        for generic in [op for op in nested_ops(module) if op.name == "linalg.generic"]:
            cuts = _cuts(generic)
            if cuts:
                _split(generic, cuts)


def _cuts(generic: ir.Operation) -> list[int]:
    """Where the innermost loop's picks change, or [] when it cannot be split."""
    extents = loop_extents(generic)
    kinds = [str(a) for a in generic.attributes["iterator_types"]]
    if not extents or any("parallel" not in kind for kind in kinds):
        return []
    innermost = len(extents) - 1
    if not all(_walk_dim(amap, innermost) is not False for amap in _maps(generic)):
        return []
    cuts = {_pick_bound(op, innermost) for op in _branches(generic.regions[0].blocks[0])}
    cuts.discard(None)
    cuts = sorted(c for c in cuts if 0 < c < extents[innermost])
    return cuts if 0 < len(cuts) < MAX_PARTS else []


def _maps(generic: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in generic.attributes["indexing_maps"]]


def _walk_dim(amap: ir.AffineMap, loop: int):
    """Which operand dim the map walks with loop ``loop`` (None: no dim;
    False: through an expression this pass does not slice)."""
    for position, expr in enumerate(amap.results):
        text = str(expr)
        if text == f"d{loop}":
            return position
        if f"d{loop}" in re.findall(r"d\d+", text):
            return False
    return None


def _branches(block: ir.Block) -> list[ir.Operation]:
    """The `scf.if` ops of ``block``, those nested in them too."""
    found = []
    for op in block.operations:
        if op.operation.name == "scf.if":
            found.append(op.operation)
            found += [inner for region in op.operation.regions if len(region.blocks)
                      for inner in _branches(region.blocks[0])]
    return found


def _body_ops(generic: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in generic.regions[0].blocks[0].operations]


def _pick_bound(branch: ir.Operation, innermost: int) -> int | None:
    """``c`` when ``branch`` is taken on `innermost index < c` (unsigned or signed)."""
    condition = branch.operands[0].owner
    if isinstance(condition, ir.Block) or condition.operation.name != "arith.cmpi":
        return None
    condition = condition.operation
    if ir.IntegerAttr(condition.attributes["predicate"]).value not in (2, 6):   # slt, ult
        return None
    index, bound = (operand.owner for operand in condition.operands)
    if isinstance(index, ir.Block) or isinstance(bound, ir.Block):
        return None
    if index.operation.name != "linalg.index" or bound.operation.name != "arith.constant" or \
            ir.IntegerAttr(index.operation.attributes["dim"]).value != innermost:
        return None
    return ir.IntegerAttr(bound.operation.attributes["value"]).value


def _split(generic: ir.Operation, cuts: list[int]) -> None:
    extents = loop_extents(generic)
    innermost = len(extents) - 1
    starts = [0, *cuts]
    ends = [*cuts, extents[innermost]]
    n_ins = ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])[0]
    maps = _maps(generic)
    with ir.InsertionPoint(generic), generic.location:
        wholes = list(generic.operands[n_ins:])
        for start, end in zip(starts, ends):
            parts = [_cut(value, _walk_dim(amap, innermost), start, end)
                     for value, amap in zip([*generic.operands[:n_ins], *wholes], maps)]
            piece = ir.Operation.create(
                "linalg.generic", results=[v.type for v in parts[n_ins:]], operands=parts,
                attributes={name: generic.attributes[name] for name in generic.attributes}, regions=1)
            copy = generic.clone(ir.InsertionPoint(piece))
            copy.regions[0].blocks[0].append_to(piece.regions[0])
            copy.erase()
            _fix_body(piece, innermost, start, end)
            wholes = [_paste(result, whole, _walk_dim(amap, innermost), start)
                      for result, whole, amap in zip(piece.results, wholes, maps[n_ins:])]
    for result, whole in zip(generic.results, wholes):
        result.replace_all_uses_with(whole)
    generic.erase()


def _cut(value: ir.Value, dim, start: int, end: int) -> ir.Value:
    if dim is None:
        return value
    shape = list(ir.RankedTensorType(value.type).shape)
    offsets = [0] * len(shape)
    offsets[dim], shape[dim] = start, end - start
    element = ir.RankedTensorType(value.type).element_type
    return ir.Operation.create(
        "tensor.extract_slice", results=[ir.RankedTensorType.get(shape, element)],
        operands=[value], attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get(offsets),
            "static_sizes": ir.DenseI64ArrayAttr.get(shape),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
        }).results[0]


def _paste(part: ir.Value, whole: ir.Value, dim: int, start: int) -> ir.Value:
    shape = list(ir.RankedTensorType(part.type).shape)
    offsets = [0] * len(shape)
    offsets[dim] = start
    return insert_slice(part, whole, offsets, shape)


def _fix_body(piece: ir.Operation, innermost: int, start: int, end: int) -> None:
    """Fold the picks of the stretch [start, end) and offset the innermost index."""
    while True:                 # a pick of three operands nests a branch in a branch
        picks = [(op, _pick_bound(op, innermost)) for op in _body_ops(piece) if op.name == "scf.if"]
        picks = [(branch, bound) for branch, bound in picks
                 if bound is not None and (end <= bound or start >= bound)]
        if not picks:
            break
        for branch, bound in picks:
            _inline(branch, 0 if end <= bound else 1)
    arith = dialect("arith")
    for index in [op for op in _body_ops(piece) if op.name == "linalg.index"]:
        if ir.IntegerAttr(index.attributes["dim"]).value != innermost or start == 0:
            continue
        with ir.InsertionPoint(index), index.location:
            fresh = ir.Operation.create("linalg.index", results=[ir.IndexType.get()],
                                        attributes={"dim": index.attributes["dim"]})
            shifted = arith.addi(fresh.results[0], arith.constant(ir.IndexType.get(), start))
        index.results[0].replace_all_uses_with(shifted)
        index.erase()
    _fold_offsets(piece, innermost)
    _drop_dead(piece)


def _inline(branch: ir.Operation, side: int) -> None:
    block = branch.regions[side].blocks[0]
    ops = [op.operation for op in block.operations]
    for op in ops[:-1]:
        op.move_before(branch)
    yielded = list(ops[-1].operands)
    for result, value in zip(branch.results, yielded):
        result.replace_all_uses_with(value)
    branch.erase()


def _fold_offsets(piece: ir.Operation, innermost: int) -> None:
    """Each read's last index `innermost index + constants` as one `addi`
    (or the index itself): the form the vectorizer reads contiguously."""
    arith = dialect("arith")
    for read in [op for op in _body_ops(piece) if op.name == "tensor.extract"]:
        last = len(read.operands) - 1
        found = _offset_of(read.operands[last], innermost)
        if found is None:
            continue
        index, offset = found
        if offset == 0:
            read.operands[last] = index
            continue
        with ir.InsertionPoint(read), read.location:
            read.operands[last] = arith.addi(index, arith.constant(ir.IndexType.get(), offset))


def _offset_of(value: ir.Value, innermost: int, depth: int = 0):
    """(the innermost linalg.index, k) when ``value`` is that index plus k."""
    owner = value.owner
    if isinstance(owner, ir.Block) or depth > 8:
        return None
    op = owner.operation
    if op.name == "linalg.index":
        return (value, 0) if ir.IntegerAttr(op.attributes["dim"]).value == innermost else None
    if op.name not in ("arith.addi", "arith.subi"):
        return None
    left, right = op.operands
    constant = _constant(right)
    if constant is None and op.name == "arith.addi":
        left, constant = right, _constant(left)
    found = None if constant is None else _offset_of(left, innermost, depth + 1)
    if found is None:
        return None
    return found[0], found[1] + (constant if op.name == "arith.addi" else -constant)


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.operation.attributes["value"]).value


def _drop_dead(piece: ir.Operation) -> None:
    """Erase the body's arithmetic nothing reads (the folded picks' compares)."""
    changed = True
    while changed:
        changed = False
        for op in reversed(_body_ops(piece)):
            if op.name.startswith("arith.") and all(not list(r.uses) for r in op.results):
                op.erase()
                changed = True
                break
