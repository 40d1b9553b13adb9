"""xla-fold-transposes: a transpose of a dot's result becomes the dot with
its operands swapped (part of XLA's TransposeFolding)."""

from __future__ import annotations

from xlac.mlir import ir, stablehlo
from xlac.passes.base import ModulePass, module_ops, nested_ops


class FoldTransposes(ModulePass):
    """Replace `transpose(dot_general(a, b))` that puts b's free dims before
    a's (batch dims kept first) by `dot_general(b, a)`.

    Why: a weight gradient comes as `transpose(dot_general(dy, x))` (JAX's
    transpose rule for `x @ w`); computed as written, the dot's result is
    stored, then read back across its rows by the transpose (or by the
    elementwise update it is fused into), a stride of a whole row per
    element: bench train_step's two SGD updates of 1024 x 1024 weights took
    4.2-4.8 ms each, the dot in them 2 ms. The swapped dot writes the
    transposed layout directly, in the same order of sums, so the results
    are bit-identical. Only where the dot has no other reader (it would be
    computed twice).

    Example:
        %d = stablehlo.dot_general %dy, %x, contracting_dims = [0] x [0]
           : (tensor<256x1024xf32>, tensor<256x512xf32>) -> tensor<1024x512xf32>
        %t = stablehlo.transpose %d, dims = [1, 0]
    becomes
        %t = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0]
           : (tensor<256x512xf32>, tensor<256x1024xf32>) -> tensor<512x1024xf32>

    A transpose that only feeds a dot's operand is folded into the dot's
    dimension numbers instead (where the operand's free dims keep their
    order, as with a 2-D weight): a PyTorch export transposes its Linear
    weights, [n, k] -> [k, n], before each dot, and that transpose was a
    kernel of its own where the dot reads few rows (MobileNetV2's classifier,
    1.4 ms of 26.5); the lowering now sees the weight as stored.

        %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<1000x1280xf32>) -> tensor<1280x1000xf32>
        %y = stablehlo.dot_general %x, %wt, contracting_dims = [1] x [0]
    becomes
        %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [1]
    """

    name = "xla-fold-transposes"
    acts_on = frozenset({"stablehlo.transpose"})   # both folds read one

    def run(self, module: ir.Operation) -> None:
        ops, swapped = module_ops(module), False       # the census's walk
        for op in ops:
            if op.name == "stablehlo.transpose":
                dot = _foldable_dot(op)
                if dot is not None:
                    _swap(op, dot)
                    swapped = True
        # walked again only where a swap made new dots
        for op in [op for op in (nested_ops(module) if swapped else ops) if op.name == "stablehlo.dot_general"]:
            for side in (0, 1):
                _fold_operand_transpose(op, side)


def _foldable_dot(transpose: ir.Operation) -> ir.Operation | None:
    """The dot_general ``transpose`` swaps the free dims of, if it is its only reader."""
    owner = transpose.operands[0].owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.dot_general":
        return None
    dot = owner.operation
    if len(list(dot.results[0].uses)) != 1:
        return None
    numbers = stablehlo.DotDimensionNumbers(dot.attributes["dot_dimension_numbers"])
    batch = len(numbers.lhs_batching_dimensions)
    lhs_free = dot.operands[0].type.rank - batch - len(numbers.lhs_contracting_dimensions)
    rhs_free = dot.operands[1].type.rank - batch - len(numbers.rhs_contracting_dimensions)
    swapped = [*range(batch), *range(batch + lhs_free, batch + lhs_free + rhs_free),
               *range(batch, batch + lhs_free)]
    permutation = list(ir.DenseI64ArrayAttr(transpose.attributes["permutation"]))
    return dot if permutation == swapped and lhs_free and rhs_free else None


def _swap(transpose: ir.Operation, dot: ir.Operation) -> None:
    numbers = stablehlo.DotDimensionNumbers(dot.attributes["dot_dimension_numbers"])
    attributes = dot_attributes(dot, stablehlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=numbers.rhs_batching_dimensions,
        rhs_batching_dimensions=numbers.lhs_batching_dimensions,
        lhs_contracting_dimensions=numbers.rhs_contracting_dimensions,
        rhs_contracting_dimensions=numbers.lhs_contracting_dimensions,
        context=dot.context))
    if "precision_config" in attributes:        # one per operand, in operand order
        attributes["precision_config"] = ir.ArrayAttr.get(
            list(ir.ArrayAttr(attributes["precision_config"]))[::-1], context=dot.context)
    with ir.InsertionPoint(transpose), dot.location:
        swapped = ir.Operation.create("stablehlo.dot_general", results=[transpose.results[0].type],
                                      operands=[dot.operands[1], dot.operands[0]],
                                      attributes=attributes)
    transpose.results[0].replace_all_uses_with(swapped.results[0])
    transpose.erase()
    dot.erase()


def _fold_operand_transpose(dot: ir.Operation, side: int) -> None:
    """Read operand ``side`` of ``dot`` through the transpose making it, if the
    transpose has no other reader and the operand's free dims keep their order."""
    owner = dot.operands[side].owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.transpose" \
            or len(list(owner.results[0].uses)) != 1:
        return
    permutation = list(ir.DenseI64ArrayAttr(owner.attributes["permutation"]))
    numbers = stablehlo.DotDimensionNumbers(dot.attributes["dot_dimension_numbers"])
    lists = [list(numbers.lhs_batching_dimensions), list(numbers.rhs_batching_dimensions),
             list(numbers.lhs_contracting_dimensions), list(numbers.rhs_contracting_dimensions)]
    batch, contracting = lists[side], lists[2 + side]
    free = [d for d in range(len(permutation)) if d not in batch and d not in contracting]
    if [permutation[d] for d in free] != sorted(permutation[d] for d in free):
        return                                    # the result's layout would change
    lists[side] = [permutation[d] for d in batch]
    lists[2 + side] = [permutation[d] for d in contracting]
    attributes = dot_attributes(dot, stablehlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=lists[0], rhs_batching_dimensions=lists[1],
        lhs_contracting_dimensions=lists[2], rhs_contracting_dimensions=lists[3],
        context=dot.context))
    for name, value in attributes.items():
        dot.attributes[name] = value
    dot.operands[side] = owner.operands[0]
    owner.erase()


def dot_attributes(dot: ir.Operation, numbers) -> dict:
    """``dot``'s attributes (precision, algorithm...) with other dimension numbers."""
    attributes = {named.name: named.attr
                  for named in (dot.attributes[i] for i in range(len(dot.attributes)))}
    attributes["dot_dimension_numbers"] = numbers
    return attributes
