"""xla-collapse-reduction-loops: a reduction's neighbouring loops merged, so a schedule takes it
(and an elementwise op's, where its innermost loop is shorter than a vector)."""

from __future__ import annotations

import math

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, dim_position, module_ops, nested_ops, text_of
from xlac.passes.cpu.plans.permuted_reads import copy_permutation
from xlac.passes.cpu.plans.schedule_plan import REDUCTION_LANES, Machine, loop_extents, loop_nest, reduction_plan


class CollapseReductionLoops(ModulePass):
    """Merge neighbouring loops of a reducing `linalg.generic` on tensors that
    every operand walks together (consecutive dims, in loop order, or not at
    all) and that are both parallel or both reductions: the operands are
    collapsed (`tensor.collapse_shape`, free on row-major data) and the result
    expanded back.

    Why: the CPU schedules take a reduction with one reduced loop innermost
    ("rows", "columns"). xla-flatten-reductions merges dims at the StableHLO
    level, but linalg's elementwise fusion folds those reshapes back into the
    generic: a group norm's partial sum over height and width with the group's
    channels kept, (n, g, c | h, w) on a 2x32x32x32x4 input, ran as scalar
    loops; merged it is (n, g*c | h*w), a column reduction of 128-wide rows.
    An elementwise generic is merged the same way where its innermost loop
    is shorter than a vector (a complex tensor's parts, xla-complex-as-pairs):
    its vectors would hold 2 lanes; its `linalg.index` reads become the
    merged loop's, divided back where a group merges several (an iota of
    pairs). A transpose in generic form is merged so too: (180, 2048, 2) ->
    (2048, 2, 180) is the 2-D (180, 4096) -> (4096, 180), whose register
    blocks read rows of 16 of the 4096 (rank 3, the input's contiguous loop
    is 2 long: no blocks, an element gathered at a time, 8 KiB apart).
    A reduction whose body reads `linalg.index` stays as it is. Example:

        linalg.generic {maps = [(n, g, c, h, w) -> (n, h, w, g, c),
                                (n, g, c, h, w) -> (n, g, c)]} ins(%x : 2x32x32x32x4)
      becomes
        %flat = tensor.collapse_shape %x [[0], [1, 2], [3, 4]] : ... into 2x1024x128
        linalg.generic {maps = [(n, gc, hw) -> (n, hw, gc), (n, gc, hw) -> (n, gc)]}
    """

    name = "xla-collapse-reduction-loops"

    def run(self, module: ir.Operation) -> None:
        for op in [op for op in module_ops(module) if op.name == "linalg.generic"]:
            groups = _loop_groups(op)
            if groups is not None:
                _collapse(op, groups)


def _maps(op: ir.Operation) -> list[list[int]]:
    """Each operand's map as the loop behind each of its dims (None: not a projection)."""
    maps = []
    for attr in ir.ArrayAttr(op.attributes["indexing_maps"]):
        dims = [dim_position(e) for e in ir.AffineMapAttr(attr).value.results]
        if None in dims:
            return None
        maps.append(dims)
    return maps


def _loop_groups(op: ir.Operation) -> list[list[int]] | None:
    """Runs of neighbouring loops to merge, or None when nothing merges (or the
    op is not a static, index-free reduction on tensors)."""
    iterators = [text_of(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
    if len(op.results) != 1 or not (any("reduction" in t for t in iterators) or _short_inner(op)
                                    or _transposing_copy(op)):
        return None
    if any(not isinstance(v.type, ir.RankedTensorType) or not ir.RankedTensorType(v.type).has_static_shape
           for v in op.operands):
        return None
    if any(inner.name == "linalg.index" for inner in nested_ops(op)) and \
            any("reduction" in t for t in iterators):
        return None                       # an argmax's index: kept as written
    maps = _maps(op)
    if maps is None or _scheduled_as_is(op):
        return None
    indexed = any(inner.name == "linalg.index" for inner in nested_ops(op))
    groups = [[0]]
    for loop in range(1, len(iterators)):
        last = groups[-1][-1]
        # an op that reads its indices: only complex numbers' 2 parts merged
        # into the loop before them (the indices of the others stay plain, no
        # division; a roll's 5 columns, read by index, stay the columns that
        # xla-peel-roll-columns peels)
        if iterators[loop] == iterators[last] and all(_together(m, last, loop) for m in maps) \
                and (not indexed or (loop == len(iterators) - 1 and _extent(op, loop) == 2)):
            groups[-1].append(loop)
        else:
            groups.append([loop])
    return groups if len(groups) < len(iterators) else None


def _extent(op: ir.Operation, loop: int) -> int:
    return loop_extents(op)[loop]


def _short_inner(op: ir.Operation) -> bool:
    """Whether elementwise ``op``'s innermost loop is shorter than a vector
    (complex numbers' 2 parts): the elementwise plan's vectors run along it,
    2 lanes each; merged with its neighbour they fill. A broadcast of 1024 c64
    pairs to 512 rows: 0.48 ms as (512, 1024, 2), 0.20 as (512, 2048)."""
    extents = ir.RankedTensorType(op.results[0].type).shape
    return len(extents) > 1 and extents[-1] < REDUCTION_LANES


def _transposing_copy(op: ir.Operation) -> bool:
    """Whether ``op`` is a transpose in generic form (a copy through a permuted map, not the identity)."""
    permutation = copy_permutation(op)
    return permutation is not None and permutation != sorted(permutation)


def _scheduled_as_is(op: ir.Operation) -> bool:
    """Whether a reduction schedule takes ``op`` as it is (a softmax's row
    reductions, which the fused-row schedule also takes with their consumers:
    they keep their shape), with a contiguous loop a vector long. Where that
    loop is shorter, the schedule reads across it (strided lanes): a column
    sum of complex pairs, (1024, 2 | 512), read 16 rows apart per lane, 12x
    the time of the (2048 | 512) it merges into."""
    nest = loop_nest(op)
    if nest is None or reduction_plan(nest, Machine(threads=2, vector_bytes=64)) is None:
        return False
    return nest.extents[nest.contiguous] >= REDUCTION_LANES


def _together(dims: list[int], first: int, second: int) -> bool:
    """Whether an operand walks loop ``second`` right after loop ``first`` (or neither)."""
    if first not in dims and second not in dims:
        return True
    return first in dims and second in dims and dims.index(second) == dims.index(first) + 1


def _collapse(op: ir.Operation, groups: list[list[int]]) -> None:
    group_of = {loop: g for g, group in enumerate(groups) for loop in group}
    maps = _maps(op)
    iterators = list(ir.ArrayAttr(op.attributes["iterator_types"]))
    with ir.InsertionPoint(op), op.location:
        operands, new_maps = [], []
        for value, dims in zip(op.operands, maps):
            reassociation = _reassociation(dims, group_of)
            operands.append(_collapsed(value, reassociation))
            new_maps.append([group_of[dims[run[0]]] for run in reassociation])
        result_type = operands[-1].type
        generic = ir.Operation.create(
            "linalg.generic", results=[result_type], operands=operands, regions=1,
            attributes={
                "indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get(
                    len(groups), 0, [ir.AffineDimExpr.get(d) for d in dims])) for dims in new_maps]),
                "iterator_types": ir.ArrayAttr.get([iterators[group[0]] for group in groups]),
                "operandSegmentSizes": op.attributes["operandSegmentSizes"],
                **{a.name: a.attr for a in discardable_attributes(op)}})
        op.regions[0].blocks[0].append_to(generic.regions[0])
        _renumber_indices(generic, groups, loop_extents(op))
        out = _reassociation(maps[-1], group_of)
        expanded = ir.Operation.create(
            "tensor.expand_shape", results=[op.results[0].type], operands=[generic.results[0]],
            attributes={"reassociation": _reassociation_attr(out),
                        "static_output_shape": ir.DenseI64ArrayAttr.get(
                            ir.RankedTensorType(op.results[0].type).shape)})
    op.results[0].replace_all_uses_with(expanded.results[0])
    op.erase()


def _renumber_indices(generic: ir.Operation, groups: list[list[int]], extents: list[int]) -> None:
    """Each `linalg.index` of a loop in the merged ``generic``: its group's
    index, or within a group of several the loop's place in it (an iota of
    complex pairs, 300 x 2 merged: the 300's index is the merged one halved)."""
    arith = dialect("arith")
    originals = [o for o in nested_ops(generic) if o.name == "linalg.index"]
    _fold_linearized(generic, groups, extents)          # its indices: the merged loops' already
    for index in originals:
        if not list(index.results[0].uses):
            index.erase()
            continue
        loop = ir.IntegerAttr(index.attributes["dim"]).value
        group = next(g for g, members in enumerate(groups) if loop in members)
        members = groups[group]
        with ir.InsertionPoint(index), index.location:
            merged = ir.Operation.create("linalg.index", results=[ir.IndexType.get()],
                                         attributes={"dim": ir.IntegerAttr.get(
                                             ir.IntegerType.get_signless(64), group)}).results[0]
            inner = math.prod(extents[m] for m in members[members.index(loop) + 1:])
            value = arith.divui(merged, arith.constant(ir.IndexType.get(), inner)) if inner > 1 else merged
            if loop != members[0]:
                value = arith.remui(value, arith.constant(ir.IndexType.get(), extents[loop]))
        index.results[0].replace_all_uses_with(value)
        index.erase()


def _fold_linearized(generic: ir.Operation, groups: list[list[int]], extents: list[int]) -> None:
    """An `affine.apply` of the indices of one merged group in row-major order
    (upstream's fusion folds the expand_shape of merged pairs into the op so:
    `s0 + s1 * 2` of indices 2 and 1): the merged loop's index itself."""
    for apply in [o for o in nested_ops(generic) if o.name == "affine.apply"]:
        loops = [_index_loop(v) for v in apply.operands]
        terms = _linear_terms(ir.AffineMapAttr(apply.attributes["map"]).value)
        if terms is None or None in loops or terms.get("const", 0):
            continue
        coefficients = {loops[pos]: c for pos, c in terms.items() if pos != "const"}
        group = next((g for g, members in enumerate(groups) if set(members) == set(coefficients)), None)
        if group is None or len(groups[group]) < 2 or len(set(loops)) != len(loops):
            continue
        members = groups[group]
        if any(coefficients[m] != math.prod(extents[k] for k in members[i + 1:])
               for i, m in enumerate(members)):
            continue
        with ir.InsertionPoint(apply), apply.location:
            merged = ir.Operation.create("linalg.index", results=[ir.IndexType.get()],
                                         attributes={"dim": ir.IntegerAttr.get(
                                             ir.IntegerType.get_signless(64), group)}).results[0]
        apply.results[0].replace_all_uses_with(merged)
        apply.erase()


def _index_loop(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "linalg.index":
        return None
    return ir.IntegerAttr(owner.attributes["dim"]).value


def _linear_terms(amap) -> dict | None:
    """A one-result map over symbols (or dims) as {operand position: coefficient,
    "const": c}, or None where it is not such a sum."""
    if len(amap.results) != 1:
        return None
    terms: dict = {}

    def add(expr, scale: int) -> bool:
        expr = expr.maybe_downcast()
        if isinstance(expr, ir.AffineAddExpr):
            return add(expr.lhs, scale) and add(expr.rhs, scale)
        if isinstance(expr, ir.AffineMulExpr):
            factor = expr.rhs.maybe_downcast()
            return isinstance(factor, ir.AffineConstantExpr) and add(expr.lhs, scale * factor.value)
        if isinstance(expr, ir.AffineConstantExpr):
            terms["const"] = terms.get("const", 0) + scale * expr.value
            return True
        if isinstance(expr, ir.AffineSymbolExpr):
            key = amap.n_dims + expr.position
        elif isinstance(expr, ir.AffineDimExpr):
            key = expr.position
        else:
            return False
        terms[key] = terms.get(key, 0) + scale
        return True
    return terms if add(amap.results[0], 1) else None


def _reassociation(dims: list[int], group_of: dict[int, int]) -> list[list[int]]:
    """An operand's dims grouped as its loops merge."""
    runs: list[list[int]] = []
    for position, loop in enumerate(dims):
        if runs and group_of[dims[runs[-1][-1]]] == group_of[loop]:
            runs[-1].append(position)
        else:
            runs.append([position])
    return runs


def _collapsed(value: ir.Value, reassociation: list[list[int]]) -> ir.Value:
    shaped = ir.RankedTensorType(value.type)
    if len(reassociation) == shaped.rank:
        return value
    shape = [math.prod(shaped.shape[d] for d in run) for run in reassociation]
    return ir.Operation.create(
        "tensor.collapse_shape", results=[ir.RankedTensorType.get(shape, shaped.element_type)],
        operands=[value], attributes={"reassociation": _reassociation_attr(reassociation)}).result


def _reassociation_attr(runs: list[list[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in run])
                             for run in runs])


def discardable_attributes(op: ir.Operation) -> list:
    """The op's attributes that are not linalg.generic's own (xla-fuse's marks)."""
    own = ("indexing_maps", "iterator_types", "operandSegmentSizes", "doc", "library_call")
    attributes = op.attributes
    return [attributes[i] for i in range(len(attributes)) if attributes[i].name not in own]
