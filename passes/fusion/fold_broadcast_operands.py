"""xla-fold-broadcast-operands: a dot's operand broadcast along the batch dims
becomes an unbatched operand (the weight of a batched linear layer)."""

from __future__ import annotations

from xlac.mlir import ir, stablehlo
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.fusion.fold_transposes import dot_attributes


class FoldBroadcastOperands(ModulePass):
    """Replace `dot_general(a, broadcast_in_dim(w))` batched over dims along
    which `w` is only repeated by `dot_general(a, w)` with a's batch dims free.

    Why: torch-mlir exports `nn.Linear` on a [seq, batch, d] activation (and
    an LSTM's input projection) as a batched matmul against the weight
    broadcast to every batch element: torch.nn.TransformerEncoder's four
    layers each materialized a 128 x 256 x 768 copy of a 768 KB weight (96 MB
    written and read back per linear, half its run time), and each batch
    element's matmul had only 4 rows. With the batch dims free dims of `a`,
    the result's dims come in the same order (batch, a's free, w's free), so
    nothing else changes; the sums are the same, in the same order.

    Example:
        %wb = stablehlo.broadcast_in_dim %w, dims = [1, 2]
            : (tensor<256x768xf32>) -> tensor<128x256x768xf32>
        %d = stablehlo.dot_general %a, %wb, batching_dims = [0] x [0],
             contracting_dims = [2] x [1]
           : (tensor<128x4x256xf32>, tensor<128x256x768xf32>) -> tensor<128x4x768xf32>
    becomes
        %d = stablehlo.dot_general %a, %w, contracting_dims = [2] x [0]
           : (tensor<128x4x256xf32>, tensor<256x768xf32>) -> tensor<128x4x768xf32>
    """

    name = "xla-fold-broadcast-operands"

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.dot_general":
                weight = _repeated_weight(op)
                if weight is not None:
                    _unbatch(op, weight)


def _repeated_weight(dot: ir.Operation) -> ir.Value | None:
    """w where rhs = broadcast_in_dim(w) repeats w along exactly the batch
    dims (rhs dim d is w's dim d - batch dims), and the lhs's batch dims come
    first; else None."""
    numbers = stablehlo.DotDimensionNumbers(dot.attributes["dot_dimension_numbers"])
    batch = list(numbers.lhs_batching_dimensions)
    if not batch or batch != list(range(len(batch))) \
            or list(numbers.rhs_batching_dimensions) != batch:
        return None
    owner = _through_identities(dot.operands[1])
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.broadcast_in_dim":
        return None
    dims = list(ir.DenseI64ArrayAttr(owner.attributes["broadcast_dimensions"]))
    rank = ir.RankedTensorType(dot.operands[1].type).rank
    if dims != list(range(len(batch), rank)):
        return None                          # w varies along a batch dim, or is permuted
    weight = owner.operands[0]
    wanted = ir.RankedTensorType(dot.operands[1].type).shape[len(batch):]
    if list(ir.RankedTensorType(weight.type).shape) != list(wanted):
        return None                          # w is itself broadcast along a kept dim
    return weight


def _through_identities(value: ir.Value):
    """The op making ``value``, past reshapes and broadcasts to the same type
    (torch-mlir writes them around the broadcast weight)."""
    owner = value.owner
    while not isinstance(owner, ir.Block) and owner.name in ("stablehlo.reshape",
                                                             "stablehlo.broadcast_in_dim") \
            and owner.operands[0].type == owner.results[0].type:
        owner = owner.operands[0].owner
    return owner


def _unbatch(dot: ir.Operation, weight: ir.Value) -> None:
    numbers = stablehlo.DotDimensionNumbers(dot.attributes["dot_dimension_numbers"])
    batch = len(numbers.rhs_batching_dimensions)
    attributes = dot_attributes(dot, stablehlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[], rhs_batching_dimensions=[],
        lhs_contracting_dimensions=list(numbers.lhs_contracting_dimensions),
        rhs_contracting_dimensions=[d - batch for d in numbers.rhs_contracting_dimensions],
        context=dot.context))
    with ir.InsertionPoint(dot), dot.location:
        unbatched = ir.Operation.create("stablehlo.dot_general", results=[dot.results[0].type],
                                        operands=[dot.operands[0], weight], attributes=attributes)
    repeated = dot.operands[1].owner
    dot.results[0].replace_all_uses_with(unbatched.results[0])
    dot.erase()
    _erase_unread(repeated)


_MOVES = ("stablehlo.reshape", "stablehlo.broadcast_in_dim", "stablehlo.transpose")


def _erase_unread(op) -> None:
    """The broadcast chain no one reads now: gone before xla-fuse, which would
    otherwise make kernels of it (its report counting 100 MB per weight)."""
    while not isinstance(op, ir.Block) and op.name in _MOVES and not list(op.results[0].uses):
        source = op.operands[0].owner
        op.erase()
        op = source
