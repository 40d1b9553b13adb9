"""xla-collapse-unit-epilogue-dims: a matmul's epilogue past the epilogue
plans' rank, its unit dims dropped, is of their rank."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.cpu.plans.epilogue_plan import MAX_RANK

_I64 = 64


class CollapseUnitEpilogueDims(ModulePass):
    """An all-parallel `linalg.generic` of rank above the epilogue plans'
    (3) that reads a `linalg.matmul`'s result through a `tensor.expand_shape`
    and whose result has unit dims becomes the same generic without them:
    each operand reads a `tensor.collapse_shape` of itself (the matmul's
    result the expand's source), and its result is expanded back.

    Why: torch_lstm's step (a torch addmm, its alpha and beta read from 0-D
    buffers, plus the step's input projection) is a 1 x 1 x 8 x 1024
    epilogue of the 8 x 256 . 256 x 1024 gate product. Past epilogue_plan's
    3-D limit it got no plan: the product was a plain block-packed matmul
    that copied all of B (1 MB) into its chunks' panels every step, and the
    epilogue a second pass over C. As 8 x 1024 it is the LSTM's one-tile
    in-place plan (matmul_epilogue_unpacked.mlir), as flax_lstm_scan's step
    is. Unit dims move no data; the ops and their order are the same.

        %e = tensor.expand_shape %mm [[0, 1, 2], [3]] : 8x1024 into 1x1x8x1024
        %r = linalg.generic ins(%e, %x : 1x1x8x1024, 1x8x1024) ...
      becomes
        %x2 = tensor.collapse_shape %x [[0, 1], [2]] : 1x8x1024 into 8x1024
        %r2 = linalg.generic ins(%mm, %x2 : 8x1024, 8x1024) ...
        %r = tensor.expand_shape %r2 [[0, 1, 2], [3]] : 8x1024 into 1x1x8x1024
    """

    name = "xla-collapse-unit-epilogue-dims"
    acts_on = frozenset({"linalg.generic"})

    def run(self, module: ir.Operation) -> None:
        for op in [op for op in module_ops(module) if _collapsible(op)]:
            _collapse(op)


def _collapsible(op: ir.Operation) -> bool:
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.regions[0].blocks) != 1:
        return False
    result = ir.RankedTensorType(op.results[0].type) if isinstance(op.results[0].type, ir.RankedTensorType) \
        else None
    if result is None or not result.has_static_shape or result.rank <= MAX_RANK:
        return False
    kept = [d for d in range(result.rank) if result.shape[d] != 1]
    if not 2 <= len(kept) <= MAX_RANK:
        return False
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    maps = _maps(op)
    if any("parallel" not in it for it in iterators) \
            or str(maps[-1]) != str(ir.AffineMap.get_identity(result.rank)) \
            or not all(isinstance(e, ir.AffineDimExpr) for m in maps for e in m.results):
        return False
    return any(_expanded_matmul(value) is not None for value in list(op.operands)[:-1])


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _expanded_matmul(value: ir.Value) -> ir.Value | None:
    """The matmul result ``value`` is a tensor.expand_shape of, if so."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "tensor.expand_shape":
        return None
    source = owner.operands[0]
    producer = source.owner
    if isinstance(producer, ir.Block) or producer.name != "linalg.matmul":
        return None
    return source


def _collapse(op: ir.Operation) -> None:
    result = ir.RankedTensorType(op.results[0].type)
    dropped = {d for d in range(result.rank) if result.shape[d] == 1}
    renumber = {d: i for i, d in enumerate(d for d in range(result.rank) if d not in dropped)}
    maps = _maps(op)
    with op.location, ir.InsertionPoint(op):
        operands = [_collapsed_operand(value, amap, dropped) for value, amap in zip(op.operands, maps)]
        new_maps = [ir.AffineMap.get(len(renumber), 0, [ir.AffineDimExpr.get(renumber[e.position])
                                                        for e in amap.results if e.position not in dropped])
                    for amap in maps]
        copy = op.clone(ir.InsertionPoint(op))
    for index, value in enumerate(operands):
        copy.operands[index] = value
    copy.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
    iterators = list(ir.ArrayAttr(op.attributes["iterator_types"]))     # all parallel
    copy.attributes["iterator_types"] = ir.ArrayAttr.get(iterators[:len(renumber)])
    copy.results[0].set_type(operands[-1].type)
    with op.location, ir.InsertionPoint(op):
        expanded = _reshape("tensor.expand_shape", copy.results[0], result, _groups(result.rank, dropped))
    op.results[0].replace_all_uses_with(expanded)
    readers = [value.owner for value in op.operands if not isinstance(value.owner, ir.Block)]
    op.erase()
    for reader in readers:          # the matmul's expand, read by the copy no more: one use of C
        if reader.name in ("tensor.expand_shape", "tensor.empty") and not list(reader.results[0].uses):
            reader.erase()


def _collapsed_operand(value: ir.Value, amap: ir.AffineMap, dropped: set[int]) -> ir.Value:
    """``value`` without the dims its map reads at a dropped (unit) loop."""
    gone = {i for i, e in enumerate(amap.results) if e.position in dropped}
    if not gone:
        return value
    tensor = ir.RankedTensorType(value.type)
    shape = [s for i, s in enumerate(tensor.shape) if i not in gone]
    target = ir.RankedTensorType.get(shape, tensor.element_type)
    source = _expanded_matmul(value)
    if source is not None and source.type == target:
        return source
    return _reshape("tensor.collapse_shape", value, target, _groups(tensor.rank, gone))


def _groups(rank: int, gone: set[int]) -> list[list[int]]:
    """Each kept dim with the unit dims after it (leading unit dims: with the first)."""
    groups: list[list[int]] = []
    leading: list[int] = []
    for d in range(rank):
        if d in gone:
            (groups[-1] if groups else leading).append(d)
        else:
            groups.append(leading + [d])
            leading = []
    if leading and groups:
        groups[-1].extend(leading)
    return groups


def _reshape(name: str, value: ir.Value, target: ir.RankedTensorType, groups: list[list[int]]) -> ir.Value:
    i64 = ir.IntegerType.get_signless(_I64)
    attributes = {"reassociation": ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g])
                                                     for g in groups])}
    if name == "tensor.expand_shape":
        attributes["static_output_shape"] = ir.DenseI64ArrayAttr.get(list(target.shape))
    return ir.Operation.create(name, results=[target], operands=[value], attributes=attributes).results[0]
