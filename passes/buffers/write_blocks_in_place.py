"""xla-write-blocks-in-place: a kernel whose result is inserted as a contiguous block writes it there."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops
from xlac.passes.buffers.update_windows_in_place import owned_by, parallel_at_output, split_operands


class WriteBlocksInPlace(ModulePass):
    """Where the one result of a parallel `linalg.generic` whose init is a
    `tensor.empty` (its elements unread) is used only by a
    `tensor.insert_slice` of static offsets, sizes and unit strides that is a
    contiguous block of the destination (unit sizes, then one dim of any
    extent, then whole dims: a stacked operand, rows of a matrix), make the
    destination's slice (`tensor.extract_slice` at the same place) the
    generic's init, the generic moved down to just before the insert.

    Why: xla-concatenate-as-slices writes `jnp.stack([a*b, a+b, a-b])` and
    other outer-axis concatenates as slices inserted into an empty tensor;
    bufferization gave each operand's kernel a buffer of its own and copied
    it into the result (3 x 2 MiB written twice). With the destination's
    slice as init, the insert is the slice it came from: bufferization
    writes each kernel's rows in the result, no copy (what upstream's
    eliminate-empty-tensors does, kept to blocks: a strided slice, an
    innermost-axis concatenate's operand, keeps its own buffer and its
    schedule's contiguous rows).

        %e = tensor.empty() : tensor<1x4xf32>
        %g = linalg.generic ins(%a) outs(%e) {...} -> tensor<1x4xf32>
        %r = tensor.insert_slice %g into %d[1, 0] [1, 4] [1, 1]
      ->
        %s = tensor.extract_slice %d[1, 0] [1, 4] [1, 1]
        %g = linalg.generic ins(%a) outs(%s) {...} -> tensor<1x4xf32>
        %r = tensor.insert_slice %g into %d[1, 0] [1, 4] [1, 1]
    """

    name = "xla-write-blocks-in-place"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)
    acts_on = frozenset({"tensor.insert_slice"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "tensor.insert_slice" and (generic := _block_writer(op)) is not None:
                _write_in_place(generic, op)
                forget_module_ops()


def _block_writer(insert: ir.Operation) -> ir.Operation | None:
    """The generic whose result ``insert`` puts in a contiguous block, if it may write it there."""
    source, destination = list(insert.operands)[:2]
    if len(list(insert.operands)) != 2 or not owned_by(source, "linalg.generic") \
            or not _contiguous_block(insert, destination):
        return None
    generic = source.owner.operation
    ins, outs = split_operands(generic)
    if len(outs) != 1 or len(generic.results) != 1 or not owned_by(outs[0], "tensor.empty") \
            or len(list(source.uses)) != 1 or generic.block != insert.block or not parallel_at_output(generic):
        return None
    out_argument = generic.regions[0].blocks[0].arguments[len(ins)]
    return generic if not list(out_argument.uses) else None


def _contiguous_block(insert: ir.Operation, destination: ir.Value) -> bool:
    """Static unit-stride slice: unit sizes, one dim of any extent, then whole dims."""
    dest_shape = list(ir.RankedTensorType(destination.type).shape)
    sizes = list(ir.DenseI64ArrayAttr(insert.attributes["static_sizes"]))
    offsets = list(ir.DenseI64ArrayAttr(insert.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(insert.attributes["static_strides"]))
    if any(o < 0 for o in offsets) or any(s != 1 for s in strides) or \
            ir.ShapedType.get_dynamic_size() in dest_shape or len(sizes) != len(dest_shape):
        return False
    first = next((d for d, size in enumerate(sizes) if size != 1), len(sizes))
    return all(sizes[d] == dest_shape[d] for d in range(first + 1, len(sizes)))


def _write_in_place(generic: ir.Operation, insert: ir.Operation) -> None:
    """The generic moved before ``insert``, its init the destination's slice."""
    generic.move_before(insert)
    destination = insert.operands[1]
    with insert.location, ir.InsertionPoint(generic):
        window = ir.Operation.create(
            "tensor.extract_slice", results=[generic.results[0].type], operands=[destination],
            attributes={name: insert.attributes[name]
                        for name in ("static_offsets", "static_sizes", "static_strides")}
            | {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0])}).results[0]
    ins, _ = split_operands(generic)
    generic.operands[len(ins)] = window
