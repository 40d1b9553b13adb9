"""xla-small-table-gathers-as-selects: a gather of single elements from a
short 1-d table (a searchsorted's bin edges) as a chain of compares and
selects, which is vector code."""

from __future__ import annotations

import math

from xlac.mlir import ir, stablehlo
from xlac.passes.base import ModulePass, forget_module_ops, module_ops
from xlac.passes.ingest.scalar_scatter_indices import same_elements_source

# the longest table read by selection: each element is compared with every entry
MAX_ENTRIES = 16


class SmallTableGathersAsSelects(ModulePass):
    """A `stablehlo.gather` of one element per index (slice_sizes = [1]) from a
    1-d operand of at most 16 entries becomes, for table `t` of T entries, a
    chain of selects on the index, the entries broadcast:

        %g = "stablehlo.gather"(%t, %ids) {slice_sizes = [1], ...}
               : (tensor<6xf32>, tensor<262100x1xui32>) -> tensor<262100x1xf32>
      ->
        select(ids <= 0, t[0], select(ids <= 1, t[1], ... select(ids <= 4, t[4], t[5])))

    The chain is the gather's clamping too: an index below 0 reads t[0], one
    above T-1 reads t[T-1], as the gather clamps its start index into the
    operand. The same elements are picked: bits identical.

    Why: the CPU lowers a gather to a `tensor.extract` at a computed index,
    which the kernel schedules cannot vectorize; the kernel that holds it runs
    as a scalar loop (`jnp.histogram`'s searchsorted: three trips of a binary
    search over the bin edges, each a scalar kernel over the 262100 elements,
    ~2 ms). As compares and selects (2(T-1) vector ops an element, hence the
    bound on T) it is elementwise: the search's trips fuse into one vector
    loop, the table's entries broadcast scalars.
    """

    name = "xla-small-table-gathers-as-selects"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)
    acts_on = frozenset({"stablehlo.gather"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.gather" and _is_table_lookup(op):
                with op.location:
                    _as_selects(op)
                forget_module_ops()


def _is_table_lookup(op: ir.Operation) -> bool:
    """One element per index from a short 1-d operand, static shapes."""
    if len(op.operands) != 2 or len(op.results) != 1:
        return False
    table, ids, result = (ir.RankedTensorType(v.type) for v in (*op.operands, op.results[0]))
    if not (table.has_static_shape and ids.has_static_shape and result.has_static_shape):
        return False
    if table.rank != 1 or not 0 < table.shape[0] <= MAX_ENTRIES:
        return False
    if not isinstance(ids.element_type, ir.IntegerType) or ir.IntegerType(ids.element_type).width < 8:
        return False
    if list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"])) != [1]:
        return False
    dims = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    if list(dims.start_index_map) != [0] or list(dims.operand_batching_dims):
        return False
    vector_dim = dims.index_vector_dim
    if vector_dim < ids.rank and ids.shape[vector_dim] != 1:
        return False
    # one element per index: the result has the ids' elements (the offset dim, if kept, is 1)
    return math.prod(result.shape) == math.prod(ids.shape)


def _as_selects(op: ir.Operation) -> None:
    table, ids = op.operands
    result = ir.RankedTensorType(op.results[0].type)
    shape, element = list(result.shape), result.element_type
    index = ir.RankedTensorType(ids.type).element_type
    entries = ir.RankedTensorType(table.type).shape[0]
    point, location = ir.InsertionPoint(op), op.location

    def make(name, operands, shape_, element_type, attributes=None):
        return ir.Operation.create(name, results=[ir.RankedTensorType.get(shape_, element_type)],
                                   operands=operands, attributes=attributes or {},
                                   ip=point, loc=location).result

    def entry(k: int) -> ir.Value:
        one = make("stablehlo.slice", [table], [1], element, {
            "start_indices": ir.DenseI64ArrayAttr.get([k]), "limit_indices": ir.DenseI64ArrayAttr.get([k + 1]),
            "strides": ir.DenseI64ArrayAttr.get([1])})
        return make("stablehlo.broadcast_in_dim", [make("stablehlo.reshape", [one], [], element)], shape,
                    element, {"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])})

    # the ids as [M] (a reshape or broadcast of an [M] read at its source): the
    # result's elements in the result's order (its size-1 dims aside)
    count = math.prod(shape)
    at = ids if list(ir.RankedTensorType(ids.type).shape) == [count] \
        else same_elements_source(ids, [count])
    if at is None:
        at = make("stablehlo.reshape", [ids], [count], index)
    result_shape, shape = shape, [count]
    unsigned = ir.IntegerType(index).is_unsigned
    direction = ir.Attribute.parse("#stablehlo<comparison_direction LE>")
    kind = ir.Attribute.parse(f"#stablehlo<comparison_type {'UNSIGNED' if unsigned else 'SIGNED'}>")
    picked = entry(entries - 1)
    for k in range(entries - 2, -1, -1):
        bound = make("stablehlo.constant", [], shape, index, {"value": ir.DenseElementsAttr.get_splat(
            ir.RankedTensorType.get(shape, index), ir.IntegerAttr.get(index, k))})
        below = make("stablehlo.compare", [at, bound], shape, ir.IntegerType.get_signless(1),
                     {"comparison_direction": direction, "compare_type": kind})
        picked = make("stablehlo.select", [below, entry(k), picked], shape, element)
    if result_shape != shape:
        picked = make("stablehlo.reshape", [picked], result_shape, element)
    op.results[0].replace_all_uses_with(picked)
    op.erase()
    if ids != at and not list(ids.uses):          # the broadcast to [M, 1]: a kernel of its own
        ids.owner.erase()
