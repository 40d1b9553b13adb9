"""xla-check-masked-transfers: refuse a masked transfer read that
convert-vector-to-scf would lower wrong (cpu, just before it)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, dim_position, module_ops


class CheckMaskedTransfers(ModulePass):
    """Fail the compile, naming the op, at a masked `vector.transfer_read`
    whose permutation map transposes (two vector dims or more, not in the
    memref's order) and skips a memref dim (its dims are no permutation of the
    memref's minor dims).

    Why: upstream convert-vector-to-scf's unpacking of such a read takes the
    mask's first dim as the vector's first, while a transfer's mask is in the
    memref's order: `(d0, d1, d2, d3) -> (d3, d1)` with `mask[8, 16]` over
    (d1, d3) was read as d3 < 8, half an edge block of a ragged transpose
    never read. The peeled transposes' schedule no longer makes such a read
    (its edge reads are minor-identity rows and a transpose in registers); this
    check makes any other schedule that would an internal error rather than
    wrong numbers. A read whose dims are a permutation of the minor ones
    (`(d0, d1, d2) -> (d2, d1)`) or in order is lowered right and passes.

        %r = vector.transfer_read %m[...], %pad, %mask
               {permutation_map = affine_map<(d0, d1, d2, d3) -> (d3, d1)>}
      -> error: internal error: ... 'vector.transfer_read' ...
    """

    name = "xla-check-masked-transfers"
    keeps_ops = True                 # a check: it changes nothing, its walk is shared
    acts_on = frozenset({"vector.transfer_read"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "vector.transfer_read" and _masked(op) and mislowered_map(
                    ir.AffineMapAttr(op.attributes["permutation_map"]).value):
                raise PassFailure(op.location, (
                    f"internal error in {self.name}: a masked 'vector.transfer_read' with "
                    f"permutation map {op.attributes['permutation_map']} (it transposes and "
                    "skips a memref dim), which convert-vector-to-scf lowers reading the mask "
                    "along the wrong dim; the schedule that made it should read minor-identity "
                    "rows and transpose them in registers"))


def _masked(op: ir.Operation) -> bool:
    """A mask operand (the last operand group), or the read wrapped in `vector.mask`."""
    segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    parent = op.parent
    return segments[-1] > 0 or (parent is not None and parent.name == "vector.mask")


def mislowered_map(permutation: ir.AffineMap) -> bool:
    """Whether a transfer map transposes (two dims or more, not in order) and
    its dims are no permutation of the minor dims (broadcast results aside)."""
    used = [d for d in map(dim_position, permutation.results) if d is not None]
    rank = permutation.n_dims
    return len(used) > 1 and used != sorted(used) \
        and sorted(used) != list(range(rank - len(used), rank))
