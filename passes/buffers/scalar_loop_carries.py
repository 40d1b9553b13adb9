"""xla-scalar-loop-carries: a while loop's 0-d tensor carries -> scalars; its one-element ops -> scalar ops."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class ScalarLoopCarries(ModulePass):
    """Carry each 0-d tensor of an ``scf.while`` (a scan's counter, its scalar
    carry) as its element, and compute the loop's one-element ``linalg.generic``s
    (the counter's compare and increment, the body's scalar math, the element a
    scan writes) as scalar ops.

    Why: bufferized, a 0-d carry is a buffer of its own, and scf.while's
    before region copies every carried buffer into a fresh one each trip: per
    trip two mallocs, two frees, copies, and each scalar op a store and a load
    (lax.scan over a 1-D vector took 2.6x XLA's time). As scalars they are
    registers, and the element a scan writes is one store (``tensor.insert``).
    Runs on tensors, just before bufferization. Example:

        scf.while (%i = %c0 : tensor<i32>) { %p = linalg.generic ins(%i) {cmpi slt, %in, %n}
                                             scf.condition(extract %p[]) %i } ...
      becomes
        %s = tensor.extract %c0[]
        scf.while (%i = %s : i32) { %p = arith.cmpi slt, %i, %n
                                    scf.condition(%p) %i } ...
    """

    name = "xla-scalar-loop-carries"
    acts_on = frozenset({"scf.while"})

    def run(self, module: ir.Operation) -> None:
        loops = [op for op in module_ops(module) if op.name == "scf.while"]
        for loop in reversed(loops):                  # inner loops first: outer ones' blocks stay valid
            positions = [i for i, v in enumerate(loop.operands) if _zero_d(v.type)]
            if positions and _same_types(loop):
                loop = _scalar_carries(loop, positions)
            for region in loop.regions:
                _scalarize_block(region.blocks[0])


def _zero_d(type_: ir.Type) -> bool:
    return isinstance(type_, ir.RankedTensorType) and ir.RankedTensorType(type_).rank == 0


def _same_types(loop: ir.Operation) -> bool:
    """Both regions carry what the loop starts from and returns (stablehlo.while's loops do)."""
    types = [v.type for v in loop.operands]
    return all([a.type for a in region.blocks[0].arguments] == types for region in loop.regions) \
        and [r.type for r in loop.results] == types


def _element(value: ir.Value, ip: ir.InsertionPoint, location: ir.Location) -> ir.Value:
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.name == "tensor.from_elements":
        return owner.operands[0]
    return ir.Operation.create("tensor.extract", results=[ir.RankedTensorType(value.type).element_type],
                               operands=[value], ip=ip, loc=location).result


def _tensor(scalar: ir.Value, type_: ir.Type, ip: ir.InsertionPoint, location: ir.Location) -> ir.Value:
    return ir.Operation.create("tensor.from_elements", results=[type_], operands=[scalar],
                               ip=ip, loc=location).result


def _scalar_carries(loop: ir.Operation, positions: list[int]) -> ir.Operation:
    """``loop`` rebuilt with the carries at ``positions`` as their elements."""
    location, before_loop = loop.location, ir.InsertionPoint(loop)
    tensors = [v.type for v in loop.operands]
    operands = [_element(v, before_loop, location) if i in positions else v
                for i, v in enumerate(loop.operands)]
    types = [v.type for v in operands]
    with loop.context, location:
        new = ir.Operation.create("scf.while", results=types, operands=operands, regions=2,
                                  ip=before_loop)
        for old_region, region in zip(loop.regions, new.regions):
            old, block = old_region.blocks[0], region.blocks.append(*types)
            start = ir.InsertionPoint(block)
            for i, (old_arg, arg) in enumerate(zip(old.arguments, block.arguments)):
                old_arg.replace_all_uses_with(_tensor(arg, tensors[i], start, location)
                                              if i in positions else arg)
            for op in list(old.operations):
                block.append(op.operation)
            terminator = list(block.operations)[-1].operation
            first = 1 if terminator.name == "scf.condition" else 0
            for i in positions:
                terminator.operands[first + i] = _element(terminator.operands[first + i],
                                                          ir.InsertionPoint(terminator), location)
        after_loop = ir.InsertionPoint.after(new)
        for i, (old_result, result) in enumerate(zip(loop.results, new.results)):
            if i not in positions:
                old_result.replace_all_uses_with(result)
            elif list(old_result.uses):                   # the counter is seldom read after the loop
                old_result.replace_all_uses_with(_tensor(result, tensors[i], after_loop, location))
    loop.erase()
    return new


def _scalarize_block(block: ir.Block) -> None:
    """Fold the block's one-element tensors into scalars until nothing changes."""
    changed = True
    while changed:
        changed = False
        for op in [op.operation for op in block.operations]:
            if op.name == "linalg.generic" and _one_element_generic(op):
                _scalar_generic(op)
                changed = True
            elif op.name == "tensor.extract" and _from_elements(op.operands[0]) is not None:
                op.results[0].replace_all_uses_with(_from_elements(op.operands[0]))
                op.erase()
                changed = True
            elif op.name == "tensor.insert_slice" and _one_element_insert(op):
                _as_insert(op)
                changed = True
        for op in [op.operation for op in block.operations]:
            if op.name == "tensor.from_elements" and not list(op.results[0].uses):
                op.erase()


def _from_elements(value: ir.Value) -> ir.Value | None:
    """The scalar of a one-element ``tensor.from_elements``, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "tensor.from_elements" or len(owner.operands) != 1:
        return None
    return owner.operands[0]


def _elements(type_: ir.Type) -> int | None:
    if not isinstance(type_, ir.ShapedType):
        return 1                                      # a scalar operand
    shaped = ir.ShapedType(type_)
    if not shaped.has_static_shape:
        return None
    count = 1
    for size in shaped.shape:
        count *= size
    return count


def _one_element_generic(op: ir.Operation) -> bool:
    """A generic on one element of each operand, one of them at least computed
    in this loop (a scalar input): its body once on the elements."""
    inputs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[0]
    operands = list(op.operands)
    return all(_elements(v.type) == 1 for v in operands) and \
        all(isinstance(v.type, ir.RankedTensorType) for v in operands[inputs:]) and \
        any(_from_elements(v) is not None for v in operands[:inputs]) and \
        not any(inner.name == "linalg.index" for inner in op.regions[0].blocks[0].operations)


def _scalar_generic(op: ir.Operation) -> None:
    """Move ``op``'s body before it, on its operands' elements."""
    location, ip = op.location, ir.InsertionPoint(op)
    body = op.regions[0].blocks[0]
    for operand, arg in zip(op.operands, body.arguments):
        if list(arg.uses):
            scalar = _first_element(operand, ip, location)
            arg.replace_all_uses_with(scalar)
    ops = [o.operation for o in body.operations]
    for inner in ops[:-1]:
        inner.move_before(op)
    for result, value in zip(op.results, ops[-1].operands):
        result.replace_all_uses_with(_tensor(value, result.type, ip, location))
    op.erase()


def _first_element(value: ir.Value, ip: ir.InsertionPoint, location: ir.Location) -> ir.Value:
    """The one element of ``value`` (a scalar stays itself)."""
    if not isinstance(value.type, ir.ShapedType):
        return value
    scalar = _from_elements(value)
    if scalar is not None:
        return scalar
    tensor = ir.RankedTensorType(value.type)
    indices = []
    if tensor.rank:
        with location:
            index = ir.IndexType.get()
            indices = [ir.Operation.create("arith.constant", results=[index], ip=ip,
                                           attributes={"value": ir.IntegerAttr.get(index, 0)}).result] * tensor.rank
    return ir.Operation.create("tensor.extract", results=[tensor.element_type],
                               operands=[value, *indices], ip=ip, loc=location).result


def _one_element_insert(op: ir.Operation) -> bool:
    """An insert_slice of one scalar's element, unit strides (a scan's store of its element)."""
    if _from_elements(op.operands[0]) is None or _elements(op.operands[0].type) != 1:
        return False
    dest = ir.RankedTensorType(op.operands[1].type)
    dynamic = ir.ShapedType.get_dynamic_size()
    static_sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    static_strides = list(ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
    return len(static_sizes) == dest.rank and all(s == 1 for s in static_sizes) and \
        all(s == 1 for s in static_strides) and dynamic not in static_sizes


def _as_insert(op: ir.Operation) -> None:
    """``tensor.insert`` of the element at the slice's offsets."""
    location, ip = op.location, ir.InsertionPoint(op)
    dynamic = ir.ShapedType.get_dynamic_size()     # offsets share the sentinel
    segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    dynamic_offsets = iter(list(op.operands)[2:2 + segments[2]])
    index = ir.IndexType.get()
    indices = []
    with location:
        for offset in ir.DenseI64ArrayAttr(op.attributes["static_offsets"]):
            indices.append(next(dynamic_offsets) if offset == dynamic else ir.Operation.create(
                "arith.constant", results=[index], attributes={"value": ir.IntegerAttr.get(index, offset)},
                ip=ip).result)
    inserted = ir.Operation.create("tensor.insert", results=[op.results[0].type],
                                   operands=[_from_elements(op.operands[0]), op.operands[1], *indices],
                                   ip=ip, loc=location).result
    op.results[0].replace_all_uses_with(inserted)
    op.erase()
