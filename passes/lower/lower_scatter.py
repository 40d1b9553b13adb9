"""xla-lower-scatter: stablehlo.scatter as an scf.for nest over tensors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlac import record
from xlac.mlir import ir, stablehlo
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.helper_calls import fresh_symbol, replace_with_call

if TYPE_CHECKING:
    from xlac.passes.lower.builders.scatter_region import Region
    from xlac.passes.lower.builders.scatter_text import ScatterDims

# The scatter builders are imported where a scatter is lowered, not with the pass:
# the pipeline imports every pass, and most programs have no scatter (2-4 ms of a
# process's first compile; the op census skips ``run`` without one).


class LowerScatter(ModulePass):
    """Lower every `stablehlo.scatter` to scf loops over tensors (Python; upstream has none).

    Why: upstream stablehlo-legalize-to-linalg has no scatter pattern. Each op
    becomes a call to a private helper (folded back by `inline`) that applies
    the updates one scatter index at a time, in order, so repeated indices
    combine exactly as XLA does; a window whose start index is out of bounds
    is skipped whole. The update computation is pasted in, on whole windows
    when it is elementwise:

        %r = "stablehlo.scatter"(%in, %idx, %upd) ({add}) {...}
      ->
        %r = call @xla_scatter_0(%in, %idx, %upd)   // scf.for + extract/insert_slice

    A scatter whose windows span the operand's leading dim whole
    (``x.at[:, cols].add(v)``) runs one operand row at a time instead, in
    parallel chunks of rows (scatter_split.py): whatever its flags.

    A scatter of whole rows with `indices_are_sorted` (segment sums, embedding
    bags) runs in parallel chunks that own disjoint rows instead; with
    `unique_indices`, in parallel chunks of the updates, each row written by at
    most one (no atomics). Either computes
    its update rows where it reads them (a gather times a weight needs no
    materialized updates): see scatter_rows.py and scatter_updates.py.
    """

    name = "xla-lower-scatter"

    acts_on = frozenset({"stablehlo.scatter"})

    def run(self, module: ir.Operation) -> None:
        from xlac.passes.lower.builders.scatter_region import region_of
        from xlac.passes.lower.builders.scatter_rows import is_row_scatter
        from xlac.passes.lower.builders.scatter_split import is_leading_window_scatter, split_rows_helper
        from xlac.passes.lower.builders.scatter_text import helper_function
        for op in [o for o in module_ops(module) if o.name == "stablehlo.scatter"]:
            name = fresh_symbol(module, "xla_scatter")
            dims, region = _dims(op), region_of(op)
            sorted_ids, unique_ids = _flag(op, "indices_are_sorted"), _flag(op, "unique_indices")
            if (sorted_ids or unique_ids) and is_row_scatter(dims, region):
                _lower_rows(module, op, name, dims, region, unique=unique_ids and not sorted_ids)
            elif is_leading_window_scatter(dims):
                replace_with_call(module, op, split_rows_helper(name, dims, region), name)
            else:
                replace_with_call(module, op, helper_function(name, dims, region), name)


def _flag(op: ir.Operation, name: str) -> bool:
    return name in op.attributes and ir.BoolAttr(op.attributes[name]).value


def _lower_rows(module: ir.Operation, op: ir.Operation, name: str, dims: ScatterDims,
                region: Region, unique: bool) -> None:
    """Sorted ids: chunks own runs of rows; unique ones (not sorted): chunks of
    the updates, every row written by at most one. The row scatter's helper
    takes its update rows' leaves, not the updates; the ops that computed them
    are left without readers, and go. Ids that are a 1-d tensor broadcast to
    [n, 1] (jax's way) are read from that tensor: no kernel copies them."""
    from xlac.passes.lower.builders.scatter_rows import sorted_rows_helper, unique_rows_helper
    from xlac.passes.lower.builders.scatter_updates import update_rows
    updates, ids = op.operands[2], _one_dimensional(op.operands[1])
    dims = record.replace(dims, indices_shape=tuple(ir.RankedTensorType(ids.type).shape))
    rows = update_rows(op, updates)
    helper = unique_rows_helper if unique else sorted_rows_helper
    text = helper(name, dims, region, updates, rows)
    replace_with_call(module, op, text, name, operands=[op.operands[0], ids, *rows.leaves])
    for fused in reversed(rows.ops):
        fused.erase()


def _one_dimensional(ids: ir.Value) -> ir.Value:
    """The [n] tensor that [n, 1] ``ids`` is a broadcast or reshape of, else ``ids``."""
    owner = ids.owner
    if isinstance(owner, ir.Block) or owner.name not in ("stablehlo.broadcast_in_dim",
                                                         "stablehlo.reshape"):
        return ids
    source = owner.operands[0]
    dims = (list(ir.DenseI64ArrayAttr(owner.attributes["broadcast_dimensions"]))
            if owner.name == "stablehlo.broadcast_in_dim" else [0])
    return source if len(ir.RankedTensorType(source.type).shape) == 1 and dims == [0] else ids


def _dims(op: ir.Operation) -> ScatterDims:
    from xlac.passes.lower.builders.scatter_text import ScatterDims
    count = len(op.results)
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    if not all(t.has_static_shape for t in types):
        raise PassFailure(op.location, "scatter: dynamic shapes are not supported; "
                                       "give the entry function static argument shapes")
    inputs, indices, updates = types[:count], types[count], types[count + 1:]
    numbers = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    return ScatterDims(
        element_types=tuple(str(t.element_type) for t in inputs),
        operand_shape=tuple(inputs[0].shape),
        indices_shape=tuple(indices.shape),
        index_type=str(indices.element_type),
        updates_shape=tuple(updates[0].shape),
        update_window_dims=tuple(numbers.update_window_dims),
        inserted_window_dims=tuple(numbers.inserted_window_dims),
        input_batching_dims=tuple(numbers.input_batching_dims),
        scatter_indices_batching_dims=tuple(numbers.scatter_indices_batching_dims),
        scatter_dims_to_operand_dims=tuple(numbers.scattered_dims_to_operand_dims),
        index_vector_dim=numbers.index_vector_dim)
