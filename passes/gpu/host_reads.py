"""The scalars the host reads back from the device: the predicates and case
indices of host control flow (xla-gpu-wrap-host-code keeps them on the host,
``xlac.targets.cuda.schedule`` makes each a ReadBack step)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.gpu.launch_ops import host_control_flow, is_memref, ops_after

# casts between the loaded scalar and the op that branches on it (index-width integers)
READ_BACK_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extui", "arith.extsi")
_KERNELS = ("scf.parallel", "gpu.launch")


def control_operand(op: ir.Operation) -> ir.Value | None:
    """The scalar that host control flow ``op`` branches on, or None."""
    if op.name == "scf.condition" or (op.name in ("scf.if", "scf.index_switch")
                                      and host_control_flow(op)):
        return op.operands[0]
    if op.name == "arith.select" and is_memref(op.result):   # a canonicalized scf.if of buffers
        return op.operands[0]
    return None


def read_back_ops(block: ir.Block) -> set[ir.Operation]:
    """The loads in ``block`` the host reads back, and the casts from them to the
    control flow: a load of one element at constant indices of a buffer of static
    layout, whose value steers host control flow (a kernel may read it too: it
    loads it again itself)."""
    found = set()
    for op in block.operations:
        op = op.operation
        if op.name == "memref.load" and constant_offset(op) is not None:
            chain = _chain_to_control(op, block)
            if chain is not None:
                found.update(chain)
    return found


def _chain_to_control(op: ir.Operation, block: ir.Block) -> list[ir.Operation] | None:
    chain, steers = [op], False
    for use in op.result.uses:
        user = use.owner.operation
        if use.operand_number == 0 and control_operand(user) is not None:
            steers = True                              # here or in a region nested here
        elif user.block == block and user.name in READ_BACK_CASTS:
            rest = _chain_to_control(user, block)
            if rest is None:
                return None
            chain += rest
            steers = True
        elif not _inside_kernel(user, block):
            return None
    return chain if steers else None


def _inside_kernel(op: ir.Operation, block: ir.Block) -> bool:
    while op is not None and op.name != "func.func":
        if op.name in _KERNELS and op.block == block:
            return True
        op = op.parent
    return False


def constant_offset(load: ir.Operation) -> int | None:
    """The element offset ``load`` reads from its buffer's start (constant indices,
    static strides and offset), or None."""
    memref = ir.MemRefType(load.operands[0].type)
    strides, offset = memref.get_strides_and_offset()
    indices = []
    for value in list(load.operands)[1:]:
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.name != "arith.constant":
            return None
        indices.append(ir.IntegerAttr(owner.attributes["value"]).value)
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    if offset == dynamic or dynamic in strides:
        return None
    return offset + sum(i * s for i, s in zip(indices, strides))


def materialize_control_values(block: ir.Block) -> None:
    """Make each scalar that host control flow in ``block`` branches on and device
    code computes (not a load the host can read back) a read-back: the device
    stores it into a buffer of its own where it is made, the host loads it there."""
    for op in [op.operation for op in block.operations]:
        value = control_operand(op)
        if value is None or isinstance(value.owner, ir.Block) or _host_value(value):
            continue
        with op.context, op.location:
            buffer = ir.Operation.create("memref.alloc", results=[ir.MemRefType.get([], value.type)],
                                         attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])},
                                         ip=ir.InsertionPoint.at_block_begin(value.owner.operation.block)).result
            ir.Operation.create("memref.store", operands=[value, buffer],
                                ip=ir.InsertionPoint(ops_after(value.owner.operation, 1)[0]))
            loaded = ir.Operation.create("memref.load", results=[value.type], operands=[buffer],
                                         ip=ir.InsertionPoint(op)).result
        op.operands[0] = loaded


def _host_value(value: ir.Value) -> bool:
    """A constant, or a value the host reads back (in this block or one around it)."""
    owner = value.owner.operation
    return owner.name == "arith.constant" or owner in read_back_ops(owner.block)
