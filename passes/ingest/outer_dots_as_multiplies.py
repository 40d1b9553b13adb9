"""xla-outer-dots-as-multiplies: a dot_general without contracting dimensions
as the elementwise multiply it is."""

from __future__ import annotations

import re

from xlac.mlir import ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops

_DIMS = re.compile(r"(\w+_dimensions) = \[([\d, ]*)\]")


class OuterDotsAsMultiplies(ModulePass):
    """A float `stablehlo.dot_general` with no contracting dimensions (an outer
    product over its batch dimensions) becomes each operand brought to the
    result's dimension order (a transpose where its dimensions come in another
    order) and broadcast to the result's shape, then one `stablehlo.multiply`.

    Why: each result element is one product, a multiply's: the same bits but
    for a -0 product, which the dot (like the reference interpreter) sums from
    +0 into +0: adding +0 keeps that sign (x + 0 is x for every other x; the
    add folds into the multiply's kernel). As a
    dot it was a kernel of its own (the fuser roots fusions at dots): BERT's
    head mask, `dot_general(mask[h], P[b, h, i, j])` on the softmax's 4 x 4 x
    128 x 128 probabilities, read and wrote 2 MB a layer between the softmax's
    divide and P.V; as a multiply it fuses into the divide (XLA's algebraic
    simplifier makes the same rewrite). Operand and result element types must
    be one float type (no preferred_element_type conversion).

        %r = stablehlo.dot_general %m, %p, batching_dims = [0] x [1]
               : (tensor<4xf32>, tensor<4x4x128x128xf32>) -> tensor<4x4x128x128xf32>
      ->
        %a = stablehlo.broadcast_in_dim %m, dims = [0] : (...) -> tensor<4x4x128x128xf32>
        %t = stablehlo.transpose %p, dims = [1, 0, 2, 3]
        %x = stablehlo.multiply %a, %t
        %r = stablehlo.add %x, dense<0.0>          // -0 products as +0, as the dot
    """

    name = "xla-outer-dots-as-multiplies"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)
    acts_on = frozenset({"stablehlo.dot_general"})

    def run(self, module: ir.Operation) -> None:
        with ir.Location.unknown(module.context):
            for op in module_ops(module):
                if op.name == "stablehlo.dot_general":
                    positions = _result_positions(op)
                    if positions is not None:
                        _as_multiply(op, *positions)
                        forget_module_ops()


def _result_positions(op: ir.Operation):
    """Where each operand dimension lands in the result, per operand; None
    unless the dot has no contracting dimensions, static shapes and one float element type."""
    dims = dict.fromkeys(("lhs_batching_dimensions", "rhs_batching_dimensions",
                          "lhs_contracting_dimensions", "rhs_contracting_dimensions"), [])
    for key, values in _DIMS.findall(str(op.attributes["dot_dimension_numbers"])):
        dims[key] = [int(v) for v in values.split(",") if v.strip()]
    if dims["lhs_contracting_dimensions"] or dims["rhs_contracting_dimensions"]:
        return None
    types = [ir.RankedTensorType(v.type) for v in (*op.operands, op.results[0])]
    if not all(t.has_static_shape for t in types):
        return None            # a shape-polymorphic program's dynamic ingest: its specializations
    element = types[2].element_type
    if any(t.element_type != element for t in types) or not isinstance(element, ir.FloatType):
        return None
    batch = (dims["lhs_batching_dimensions"], dims["rhs_batching_dimensions"])
    lhs_free = [d for d in range(types[0].rank) if d not in batch[0]]
    rhs_free = [d for d in range(types[1].rank) if d not in batch[1]]
    lhs = {d: i for i, d in enumerate(batch[0])} | \
        {d: len(batch[0]) + j for j, d in enumerate(lhs_free)}
    rhs = {d: i for i, d in enumerate(batch[1])} | \
        {d: len(batch[0]) + len(lhs_free) + j for j, d in enumerate(rhs_free)}
    return [lhs[d] for d in range(types[0].rank)], [rhs[d] for d in range(types[1].rank)]


def _as_multiply(op: ir.Operation, lhs: list[int], rhs: list[int]) -> None:
    point, location = ir.InsertionPoint(op), op.location
    result = ir.RankedTensorType(op.results[0].type)

    def make(name, operands, type_, attributes):
        return ir.Operation.create(name, results=[type_], operands=operands,
                                   attributes=attributes, ip=point, loc=location).results[0]

    def to_result(value: ir.Value, positions: list[int]) -> ir.Value:
        shape = ir.RankedTensorType(value.type).shape
        order = sorted(range(len(positions)), key=positions.__getitem__)
        if order != list(range(len(order))):       # the result's dimension order first
            value = make("stablehlo.transpose", [value],
                         ir.RankedTensorType.get([shape[d] for d in order], result.element_type),
                         {"permutation": ir.DenseI64ArrayAttr.get(order)})
        if list(ir.RankedTensorType(value.type).shape) == list(result.shape):
            return value
        return make("stablehlo.broadcast_in_dim", [value], result,
                    {"broadcast_dimensions": ir.DenseI64ArrayAttr.get(sorted(positions))})

    product = make("stablehlo.multiply", [to_result(op.operands[0], lhs),
                                          to_result(op.operands[1], rhs)], result, {})
    zero = make("stablehlo.constant", [], result,
                {"value": ir.DenseElementsAttr.get_splat(result, ir.FloatAttr.get(result.element_type, 0.0))})
    total = make("stablehlo.add", [product, zero], result, {})
    op.results[0].replace_all_uses_with(total)
    op.erase()
