"""xla-constants-into-loops: a loop body's full-size splat constants, hoisted
out of it by canonicalize, copied back in so xla-fuse fuses them into the
body's kernels."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops, nested_ops
from xlac.passes.fusion.op_classes import ELEMENTWISE, is_splat_constant, op_class

_LOOPS = ("stablehlo.while",)


class ConstantsIntoLoops(ModulePass):
    """Copy into a `stablehlo.while`'s regions each value that their
    elementwise ops read from outside and that is a splat: a
    `stablehlo.constant` splat of more than one element, or a
    `broadcast_in_dim` of a rank-0 constant (the copy built from a copy of
    the constant). Other readers (a dot, a reduction, a yield) keep the
    outside value: for them the copy would be an array filled every trip.

    Why: canonicalize moves constants to the top of the function, and jax's
    `broadcast_in_dim` of one goes with them out of a loop body, so xla-fuse
    (which copies splats into the kernels of their own block) saw betainc's
    four f32 splats (1, 0, 2, eps, 200 x 320 each) as values from outside:
    each was filled once into a 256 KB array and its body kernel read the
    four arrays from memory on every trip, with the arrays it computes on.
    Copied in, they become constants in the kernel's registers. A copy
    computes nothing that was not computed; the values are the same.

        %b = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<200x320xf32>
        stablehlo.while(...) ... do { ... stablehlo.divide %b, %x ... }
      ->
        stablehlo.while(...) ... do {
          %one' = stablehlo.constant dense<1.0> : tensor<f32>
          %b' = stablehlo.broadcast_in_dim %one', dims = [] ...
          ... stablehlo.divide %b', %x ...
        }
    """

    name = "xla-constants-into-loops"

    acts_on = frozenset(_LOOPS)

    def run(self, module: ir.Operation) -> None:
        for loop in module_ops(module):
            if loop.name in _LOOPS:
                for region in loop.regions:
                    _copy_in(loop, region)


def _copy_in(loop: ir.Operation, region: ir.Region) -> None:
    ops = [nested for block in region.blocks for op in block.operations
           for nested in (op.operation, *nested_ops(op.operation))]
    inside = set(ops)
    copies: dict[ir.Value, ir.Value] = {}
    for op in [op for op in ops if op_class(op) == ELEMENTWISE]:
        for index, value in enumerate(op.operands):
            owner = value.owner
            if not isinstance(owner, ir.OpView) or owner.operation in inside or not _splat(owner.operation):
                continue
            if value not in copies:
                copies[value] = _clone_chain(owner.operation, region.blocks[0])
            op.operands[index] = copies[value]


def _splat(op: ir.Operation) -> bool:
    if op.name == "stablehlo.constant":     # complex ones too (their attribute is not readable from Python)
        return is_splat_constant(op) and ir.ShapedType(op.results[0].type).rank > 0
    if op.name == "stablehlo.broadcast_in_dim" and len(op.operands) == 1:
        source = op.operands[0].owner
        return isinstance(source, ir.OpView) and source.operation.name == "stablehlo.constant" \
            and ir.ShapedType(op.operands[0].type).rank == 0
    return False


def _clone_chain(op: ir.Operation, block: ir.Block) -> ir.Value:
    """A copy of ``op`` (and of a broadcast's constant) at the top of ``block``."""
    point = ir.InsertionPoint.at_block_begin(block)
    copy = op.clone(ip=point)
    if op.name == "stablehlo.broadcast_in_dim":
        constant = op.operands[0].owner.operation.clone(ip=ir.InsertionPoint(copy))
        copy.operands[0] = constant.results[0]
    return copy.results[0]
