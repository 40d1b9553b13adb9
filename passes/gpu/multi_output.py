"""An elementwise kernel and the reduction that reads its result, as one
multi-output linalg.generic: what XLA calls a multi-output fusion.

xla-fuse groups softmax's ``e = exp(x - max)`` with ``sum(e)`` (the divide
reads ``e`` too, so it is written out as well). On buffers they are two
generics, which were two kernels and a second pass over ``e``. Merged,
one generic computes ``e`` at each point of the reduction's space, stores
it and folds it into the sum: the reduction kernel stores ``e`` on the way
(gpu_kernel_emit.py, "pointwise" outputs).

    linalg.generic {parallel, parallel} ins(%x, %m) outs(%e)      // exp(x - m)
    linalg.generic {parallel, reduction} ins(%e) outs(%s)         // s += e
  ->
    linalg.generic {parallel, reduction} ins(%x, %m) outs(%e, %s) // yields e, s + e
"""

from __future__ import annotations

from collections.abc import Callable

from xlac.mlir import ir
from xlac.passes.gpu.launch_ops import (
    FILL_LOOKBACK,
    buffer_base,
    constant_fill_of,
    element_type,
    has_reduction,
    is_memref,
    is_view,
)
from xlac.passes.outline import clone_ops

FOLDED_INIT = "xla.folded_init"   # the merged reduction's start value: the fill it replaced


def merge_producers(ops: list[ir.Operation], wanted: Callable[[ir.Operation], bool]) -> int:
    """Merge into each reduction among ``ops`` (a block's, in order) that ``wanted``
    accepts the elementwise generic producing one of its inputs; how many."""
    merged = 0
    for reduction in [op for op in ops if op.name == "linalg.generic" and has_reduction(op)]:
        if not wanted(reduction):
            continue
        found = _producer(reduction)
        if found is not None:
            _merge(*found, reduction)
            merged += 1
    return merged


def _segments(op: ir.Operation) -> tuple[int, int]:
    inputs, outputs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return inputs, outputs


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _identity(amap: ir.AffineMap, rank: int) -> bool:
    return amap.n_dims == rank and str(amap) == str(ir.AffineMap.get_identity(rank))


def _producer(reduction: ir.Operation):
    """(producer, the input it writes, the fill of the reduction's output between
    them or None) for the first input of ``reduction`` that an elementwise generic
    before it wrote whole, point for point, and that may move to it; or None."""
    inputs, outputs = _segments(reduction)
    rank = _maps(reduction)[0].n_dims
    if outputs != 1 or _has_nested_regions(reduction):
        return None
    block_ops = [o.operation for o in reduction.block.operations]
    at = block_ops.index(reduction)
    between = block_ops[max(0, at - FILL_LOOKBACK):at]
    for index, value in enumerate(list(reduction.operands)[:inputs]):
        if not _identity(_maps(reduction)[index], rank) or list(reduction.operands).count(value) != 1:
            continue
        for offset, candidate in enumerate(reversed(between)):
            if _writes_whole(candidate, value, rank):
                movable, fill = _movable(candidate, reduction, between[len(between) - offset:])
                if movable:
                    return candidate, index, fill
                break
    return None


def _attribute_texts(op: ir.Operation) -> dict[str, str]:
    named = [op.attributes[i] for i in range(len(op.attributes))]
    return {n.name: str(n.attr) for n in named}


def _writes_whole(op: ir.Operation, value: ir.Value, rank: int) -> bool:
    """An all-parallel generic of ``rank`` loops writing only ``value``, at every point."""
    if op.name != "linalg.generic" or has_reduction(op) or _has_nested_regions(op):
        return False
    inputs, outputs = _segments(op)
    maps = _maps(op)
    return (outputs == 1 and list(op.operands)[inputs] == value and maps[0].n_dims == rank
            and _identity(maps[inputs], rank))


def _movable(producer: ir.Operation, reduction: ir.Operation, between: list[ir.Operation]):
    """Whether ``producer`` may run later, at ``reduction``, and the constant fill
    of the reduction's output among the ops ``between`` (the merged kernel starts
    from that constant instead), or None.

    No op between them but views, constants and that fill may touch the
    producer's buffers. The producer may read the buffer it writes (in place:
    attention's scores become their exps) or the one the reduction writes
    (bufferization reuses the row maxima's buffer for the row sums) only as
    that same view through the same map: each point is then read and written
    by one thread, and each row's sum written by the block that read its
    maximum, after the block has folded."""
    p_inputs, _ = _segments(producer)
    r_inputs, _ = _segments(reduction)
    output, result = list(reduction.operands)[r_inputs], list(producer.operands)[p_inputs]
    p_maps = _maps(producer)
    out_map, result_map = str(_maps(reduction)[r_inputs]), str(p_maps[p_inputs])
    read = set()
    for value, amap in zip(list(producer.operands)[:p_inputs], p_maps):
        if not is_memref(value):
            continue
        base = buffer_base(value)
        if base == buffer_base(output) and not (_same_view(value, output) and str(amap) == out_map):
            return False, None
        if base == buffer_base(result) and not (_same_view(value, result) and str(amap) == result_map):
            return False, None
        read.add(base)
    written = buffer_base(result)
    fill = None
    for op in between:
        if op.name == "arith.constant" or is_view(op):
            continue
        if fill is None and constant_fill_of(op, output):
            fill = op
            continue
        touched = {buffer_base(v) for v in op.operands if is_memref(v)}
        if written in touched or read & touched:
            return False, None
    if buffer_base(output) in read and fill is None:
        return False, None     # the output's old value is both the start and an input
    return True, fill


def _same_view(a: ir.Value, b: ir.Value) -> bool:
    """``a`` and ``b`` are one value, or the same view ops of the same values."""
    if a == b:
        return True
    if isinstance(a.owner, ir.Block) or isinstance(b.owner, ir.Block):
        return False
    first, second = a.owner, b.owner
    if first.name != second.name or not is_view(first) or a.type != b.type:
        return False
    attributes = [_attribute_texts(op) for op in (first, second)]
    operands = list(first.operands), list(second.operands)
    return (attributes[0] == attributes[1] and len(operands[0]) == len(operands[1])
            and all(_same_view(x, y) for x, y in zip(*operands)))


def _has_nested_regions(op: ir.Operation) -> bool:
    return any(len(inner.regions) for inner in op.regions[0].blocks[0].operations)


def _merge(producer: ir.Operation, index: int, fill: ir.Operation | None,
           reduction: ir.Operation) -> None:
    """One generic at ``reduction``: the producer's inputs, the reduction's other
    inputs; outputs the producer's (stored per point) and the reduction's. A
    fill of the output between them becomes the generic's FOLDED_INIT."""
    p_inputs, _ = _segments(producer)
    r_inputs, _ = _segments(reduction)
    p_operands, r_operands = list(producer.operands), list(reduction.operands)
    p_maps, r_maps = _maps(producer), _maps(reduction)
    others = [k for k in range(r_inputs) if k != index]
    operands = (p_operands[:p_inputs] + [r_operands[k] for k in others]
                + [p_operands[p_inputs], r_operands[r_inputs]])
    maps = (p_maps[:p_inputs] + [r_maps[k] for k in others] + [p_maps[p_inputs], r_maps[r_inputs]])
    context = reduction.context
    with context, reduction.location:
        attributes = {
            "indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            "iterator_types": reduction.attributes["iterator_types"],
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(operands) - 2, 2]),
        }
        if fill is not None:
            attributes[FOLDED_INIT] = fill.operands[0].owner.attributes["value"]
        merged = ir.Operation.create("linalg.generic", operands=operands, attributes=attributes,
                                     regions=1, ip=ir.InsertionPoint(reduction))
        types = [element_type(v) for v in operands]
        block = merged.regions[0].blocks.append(*types)
        args = list(block.arguments)
        p_block = producer.regions[0].blocks[0]
        r_block = reduction.regions[0].blocks[0]
        mapping = dict(zip(list(p_block.arguments)[:p_inputs], args[:p_inputs]))
        mapping[list(p_block.arguments)[p_inputs]] = args[-2]
        with ir.InsertionPoint(block):
            (pointwise,) = _clone_body(p_block, mapping)
            r_args = list(r_block.arguments)
            mapping = {r_args[index]: pointwise, r_args[r_inputs]: args[-1]}
            mapping.update({r_args[k]: args[p_inputs + n] for n, k in enumerate(others)})
            (folded,) = _clone_body(r_block, mapping)
            ir.Operation.create("linalg.yield", operands=[pointwise, folded])
    reduction.erase()
    producer.erase()
    if fill is not None:
        fill.erase()


def _clone_body(block: ir.Block, mapping: dict) -> list[ir.Value]:
    """Clone ``block``'s ops but its terminator at the insertion point, reading
    ``mapping``'s values; the values the terminator yields."""
    ops = [op.operation for op in block.operations]
    clone_ops(ops[:-1], mapping)
    return [mapping.get(v, v) for v in ops[-1].operands]
