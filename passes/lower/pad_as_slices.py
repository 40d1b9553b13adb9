"""A `stablehlo.pad` kernel as slices of one empty tensor: its border and its operand.

Part of xla-concatenate-as-slices (a pad is a concatenate of its operand
with blocks of its padding value).
"""

from __future__ import annotations

from xlac.mlir import ir

# readers that take a pad into their own loops (a pooling pads each thread's chunk)
_PAD_READERS = ("stablehlo.reduce_window", "stablehlo.convolution")


def pads_as_slices(op: ir.Operation) -> bool:
    """Whether pad ``op`` is one `replace_pad_by_slices` writes: static
    shapes, no interior padding and no negative edge (a slice first), not
    read by a window or convolution (their schedules pad per thread chunk)."""
    if any(use.owner.name in _PAD_READERS for use in op.results[0].uses):
        return False
    if not all(ir.RankedTensorType(value.type).has_static_shape
               for value in (op.operands[0], op.results[0])):
        return False
    low, high, interior = (list(ir.DenseI64ArrayAttr(op.attributes[name]))
                           for name in ("edge_padding_low", "edge_padding_high", "interior_padding"))
    return all(pad >= 0 for pad in low + high) and not any(interior) and any(low + high)


def replace_pad_by_slices(op: ir.Operation) -> None:
    """Each border block a broadcast of the padding value inserted into an
    empty result, then the operand inserted into its middle: every element
    written once (the pad's linalg form fills the whole result, then copies
    the operand over its middle: 1.5x the bytes for 512x1024 f64 rows padded
    by 8, 1.2-1.45x XLA's one pass).

    The blocks, for each dim d in order: the rows of dim d before (after) the
    operand, within the operand's extent in the dims before d and whole in
    the dims after it; together they cover the border once."""
    value, padding = op.operands
    result_type = op.results[0].type
    out = list(ir.RankedTensorType(result_type).shape)
    shape = list(ir.RankedTensorType(value.type).shape)
    low = list(ir.DenseI64ArrayAttr(op.attributes["edge_padding_low"]))
    element = ir.RankedTensorType(result_type).element_type
    with ir.InsertionPoint(op), op.location:
        whole = ir.Operation.create("tensor.empty", results=[result_type]).results[0]
        for dim in range(len(out)):
            for start, size in ((0, low[dim]), (low[dim] + shape[dim], out[dim] - low[dim] - shape[dim])):
                if size == 0:
                    continue
                offsets = low[:dim] + [start] + [0] * (len(out) - dim - 1)
                sizes = shape[:dim] + [size] + out[dim + 1:]
                block = ir.Operation.create(
                    "stablehlo.broadcast_in_dim", results=[ir.RankedTensorType.get(sizes, element)],
                    operands=[padding],
                    attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])}).results[0]
                whole = insert_slice(block, whole, offsets, sizes)
        whole = insert_slice(value, whole, low, shape)
    op.results[0].replace_all_uses_with(whole)
    op.erase()


def insert_slice(value: ir.Value, into: ir.Value, offsets: list[int], sizes: list[int]) -> ir.Value:
    return ir.Operation.create(
        "tensor.insert_slice", results=[into.type], operands=[value, into],
        attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get(offsets),
            "static_sizes": ir.DenseI64ArrayAttr.get(sizes),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * len(sizes)),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0, 0]),
        }).results[0]
