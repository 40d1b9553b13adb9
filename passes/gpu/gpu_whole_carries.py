"""xla-gpu-whole-carries: a slice that host control flow carries or yields -> a copy of its own."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass
from xlac.passes.gpu.launch_ops import host_blocks, host_control_flow

_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape", "tensor.cast")


class GpuWholeCarries(ModulePass):
    """Copy (``linalg.copy`` into a ``tensor.empty``) each slice, or reshape of a
    slice, that a host loop starts from or that host control flow yields.

    Why: bufferization gives a loop argument the layout its initial value and
    its yields share, and one with any offset and strides when they differ (a
    random key sliced out of a pair of keys, then a fresh one): a bare-pointer
    kernel cannot take that, and the host schedule carries whole buffers. The
    copy is a kernel; after it, every carried buffer has the identity layout.
    Runs on tensors, before bufferization. Example:

        %k = tensor.extract_slice %keys[2] [2] [1]      %k = tensor.extract_slice ...
        scf.while (%key = %k) ...                   ->  %c = linalg.copy ins(%k) outs(tensor.empty)
                                                        scf.while (%key = %c) ...
    """

    name = "xla-gpu-whole-carries"

    def run(self, module: ir.Operation) -> None:
        for block in host_blocks(module):
            for op in [op.operation for op in block.operations]:
                if host_control_flow(op):
                    for owner, index in _carried_operands(op):
                        if _sliced(owner.operands[index]):
                            owner.operands[index] = _copy(owner.operands[index], owner)


def _carried_operands(op: ir.Operation) -> list[tuple[ir.Operation, int]]:
    """(op, operand index) of every value ``op`` starts a loop from or a region yields."""
    found = []
    if op.name in ("scf.while", "scf.for"):
        first = 3 if op.name == "scf.for" else 0
        found += [(op, i) for i in range(first, len(op.operands))]
    for region in op.regions:
        for block in region.blocks:
            terminator = list(block.operations)[-1].operation
            first = 1 if terminator.name == "scf.condition" else 0
            found += [(terminator, i) for i in range(first, len(terminator.operands))]
    return found


def _sliced(value: ir.Value) -> bool:
    owner = value.owner
    while not isinstance(owner, ir.Block) and owner.name in _RESHAPES:
        owner = owner.operands[0].owner
    return not isinstance(owner, ir.Block) and owner.name == "tensor.extract_slice"


def _copy(value: ir.Value, before: ir.Operation) -> ir.Value:
    tensor = ir.RankedTensorType(value.type)
    with before.context, before.location, ir.InsertionPoint(before):
        empty = ir.Operation.create("tensor.empty", results=[tensor]).result
        copy = ir.Operation.create(
            "linalg.copy", results=[tensor], operands=[value, empty], regions=1,
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])})
        element = tensor.element_type
        body = copy.regions[0].blocks.append(element, element)
        with ir.InsertionPoint(body):
            ir.Operation.create("linalg.yield", operands=[body.arguments[0]])
    return copy.result
