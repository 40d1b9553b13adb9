"""xla-scalar-scatter-indices: a scatter's [..., 1] indices that only add a
unit index-vector dim to an [...] tensor read as that tensor."""

from __future__ import annotations

from xlac.mlir import ir, stablehlo
from xlac.passes.base import ModulePass, forget_module_ops, module_ops


class ScalarScatterIndices(ModulePass):
    """A `stablehlo.scatter` whose scatter_indices are a broadcast_in_dim (the
    identity dims) or a reshape of a tensor of the same elements with the unit
    index vector dim left out, `index_vector_dim` that last dim, takes that
    tensor as its indices, `index_vector_dim` its rank (each index a scalar):

        %i = stablehlo.broadcast_in_dim %ids, dims = [0] : (tensor<262100xi32>) -> tensor<262100x1xi32>
        %r = "stablehlo.scatter"(%bins, %i, %ones) {..., index_vector_dim = 1}
      ->
        %r = "stablehlo.scatter"(%bins, %ids, %ones) {..., index_vector_dim = 1}

    The same indices in the same order: the same result.

    Why: the kernel that computes the indices ends in that broadcast (jax's
    `x.at[ids]` form); with a trailing unit dim its loop nest is [M, 1] and
    the schedules vectorize the unit dim, one element a step (`jnp.histogram`'s
    bin indices, 262100 of them, ~1.6 ms); written as [M] it is vector code.
    """

    name = "xla-scalar-scatter-indices"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)
    acts_on = frozenset({"stablehlo.scatter"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.scatter":
                source = _unit_vector_source(op)
                if source is not None:
                    _read_scalars(op, source)
                    forget_module_ops()


def _unit_vector_source(op: ir.Operation) -> ir.Value | None:
    indices = op.operands[len(op.results)]
    shape = list(ir.RankedTensorType(indices.type).shape)
    dims = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    if not shape or dims.index_vector_dim != len(shape) - 1 or shape[-1] != 1:
        return None
    return same_elements_source(indices, shape[:-1])


def same_elements_source(value: ir.Value, shape: list[int]) -> ir.Value | None:
    """The ``shape`` tensor that ``value`` is a reshape of, or a broadcast_in_dim
    onto its leading dims in order (unit dims added after them); else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name not in ("stablehlo.broadcast_in_dim",
                                                         "stablehlo.reshape"):
        return None
    source = owner.operands[0]
    if list(ir.RankedTensorType(source.type).shape) != shape:
        return None
    if owner.name == "stablehlo.broadcast_in_dim" and \
            list(ir.DenseI64ArrayAttr(owner.attributes["broadcast_dimensions"])) != list(range(len(shape))):
        return None
    return source


def _read_scalars(op: ir.Operation, source: ir.Value) -> None:
    count = len(op.results)
    old = op.operands[count]
    op.operands[count] = source              # index_vector_dim, unchanged, is now the rank
    if not list(old.uses):
        old.owner.erase()
