"""A branch between reads of two slices of one tensor (a roll's two halves,
fused into its reader's loop) as one read of that tensor at a chosen index."""

from __future__ import annotations

from xlac.mlir import dialect, ir


def read_one_source(branch: ir.Operation) -> bool:
    """Replace ``branch`` (``scf.if`` yielding one element read from a slice in
    each arm) by one ``tensor.extract`` of the sliced tensor whose indices are
    ``select(cond, then_index + then_offset, else_index + else_offset)``.

    Why: a column roll (``jnp.roll`` along the last dim) picks, per element,
    between a slice shifted by one column and the wrapped column. Speculated
    as two clamped reads, the shifted slice's read would vectorize as a
    gather indexing the slice as if it were dense (wrong), so the branch
    stayed and the whole stencil ran as scalar loops. One read of the tensor
    itself, which is no slice, is right as a gather and lets the rest of the
    body vectorize. The chosen index is the taken arm's, in bounds as it was.

    Only when each arm is index arithmetic and one read of a static,
    unit-stride slice of the same tensor, with no rank dropped; else False
    and nothing changes."""
    if len(branch.regions) != 2 or len(branch.results) != 1:
        return False
    arms = [_arm(region.blocks[0]) for region in branch.regions]
    if None in arms:
        return False
    (then_read, then_slice), (else_read, else_slice) = arms
    source = then_slice.operands[0]
    if else_slice.operands[0] != source or reads_a_slice_value(source):
        return False
    for block in (region.blocks[0] for region in branch.regions):
        for op in [op.operation for op in block.operations][:-2]:
            op.move_before(branch)
    arith, tensor = dialect("arith"), dialect("tensor")
    with ir.InsertionPoint(branch), branch.location:
        indices = [_chosen(arith, branch.operands[0], a, _offset(then_slice, d),
                           b, _offset(else_slice, d))
                   for d, (a, b) in enumerate(zip(_indices(then_read), _indices(else_read)))]
        value = tensor.extract(source, indices)
    branch.results[0].replace_all_uses_with(value)
    branch.erase()
    return True


def _arm(block: ir.Block):
    """(read, slice) when ``block`` is index arithmetic, one read of a static
    slice and the yield of that read; else None."""
    ops = [op.operation for op in block.operations]
    if len(ops) < 2 or ops[-2].name != "tensor.extract" or \
            list(ops[-1].operands) != [ops[-2].results[0]]:
        return None
    if not all(op.name.startswith("arith.") and _index_only(op) for op in ops[:-2]):
        return None
    read = ops[-2]
    owner = read.operands[0].owner
    if isinstance(owner, ir.Block) or owner.operation.name != "tensor.extract_slice":
        return None
    view = owner.operation
    static = all(len(list(ir.DenseI64ArrayAttr(view.attributes[name]))) == len(view.operands[0].type.shape)
                 for name in ("static_offsets", "static_sizes"))
    if len(view.operands) != 1 or not static or \
            any(s != 1 for s in ir.DenseI64ArrayAttr(view.attributes["static_strides"])) or \
            len(view.results[0].type.shape) != len(view.operands[0].type.shape):
        return None
    return read, view


def _index_only(op: ir.Operation) -> bool:
    return all(isinstance(v.type, ir.IndexType) for v in list(op.operands) + list(op.results))


def reads_a_slice_value(value: ir.Value) -> bool:
    """Whether ``value`` is itself a slice (a strided view once bufferized),
    where a gather's dense indexing would be wrong."""
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation.name in (
        "tensor.extract_slice", "tensor.expand_shape", "tensor.collapse_shape", "tensor.cast")


def _indices(read: ir.Operation) -> list[ir.Value]:
    return list(read.operands)[1:]


def _offset(view: ir.Operation, dim: int) -> int:
    return list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))[dim]


def _chosen(arith, cond, then_index, then_offset, else_index, else_offset):
    """The index into the tensor: each arm's index shifted by its slice's offset."""
    if then_index == else_index and then_offset == else_offset:
        return _shifted(arith, then_index, then_offset)
    return arith.select(cond, _shifted(arith, then_index, then_offset),
                        _shifted(arith, else_index, else_offset))


def _shifted(arith, index, offset):
    if offset == 0:
        return index
    return arith.addi(index, arith.constant(ir.IndexType.get(), offset))
