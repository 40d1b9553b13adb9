"""``custom_call @ApproxTopK`` (lax.approx_max_k / approx_min_k) as the exact sort and slice.

jax lowers approx_max_k for the CPU to ``stablehlo.custom_call @ApproxTopK``
with ``is_fallback = true``: XLA's CPU backend runs it as its fallback, a sort
of the operands along ``reduction_dim`` with the comparator the call names
and a slice of the first elements (as many as the results hold). That exact
answer is a valid answer of every ApproxTopK (its recall is 1), so a call
lowered for a TPU (``is_fallback = false``) gets it too. The sort and slice
are then plain StableHLO: xla-sort-slice-to-top-k makes a one-pass top-k of
them where it fits.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.ingest.function_bodies import body_function, copy_body_into

TARGET = "ApproxTopK"


def is_approx_top_k(op: ir.Operation) -> bool:
    return (op.name == "stablehlo.custom_call"
            and ir.StringAttr(op.attributes["call_target_name"]).value == TARGET)


def lower_approx_top_k(module: ir.Operation, op: ir.Operation) -> list[ir.Value] | None:
    """The sort-and-slice results that replace ``op``, built before it, or None
    (``op`` left to be refused by name) where its form is not the one jax writes:
    N inputs and N init values of one static shape, N results, one comparator."""
    config = _backend_config(op)
    inputs = list(op.operands)[:len(op.results)]
    if (config is None or "reduction_dim" not in config or len(op.operands) != 2 * len(op.results)
            or "called_computations" not in op.attributes):
        return None
    comparators = ir.ArrayAttr(op.attributes["called_computations"])
    types = [ir.RankedTensorType(v.type) for v in inputs]
    if len(comparators) != 1 or not all(t.has_static_shape and t.shape == types[0].shape for t in types):
        return None
    if not all(_fits_in(ir.RankedTensorType(r.type), t) for r, t in zip(op.results, types)):
        return None
    comparator = body_function(module, ir.FlatSymbolRefAttr(comparators[0]).value)
    if comparator is None:
        return None
    dim = ir.IntegerAttr(config["reduction_dim"]).value
    dim = dim + types[0].rank if dim < 0 else dim
    with op.context, op.location:
        ip = ir.InsertionPoint(op)
        sort = _sort(inputs, dim, comparator, ip)
        return [_head(value, ir.RankedTensorType(result.type), ip)
                for value, result in zip(sort.results, op.results)]


def _fits_in(result: ir.RankedTensorType, source: ir.RankedTensorType) -> bool:
    """``result`` is a head of ``source``: its element type, no dimension longer."""
    return (result.has_static_shape and result.element_type == source.element_type
            and result.rank == source.rank and all(r <= s for r, s in zip(result.shape, source.shape)))


def _backend_config(op: ir.Operation) -> ir.DictAttr | None:
    """jax writes the call's attributes (top_k, reduction_dim, ...) as ``mhlo.backend_config``."""
    if "mhlo.backend_config" not in op.attributes:
        return None
    try:
        return ir.DictAttr(op.attributes["mhlo.backend_config"])
    except ValueError:                          # a string: another exporter's spelling
        return None


def _sort(inputs, dim: int, comparator: ir.Operation, ip: ir.InsertionPoint) -> ir.Operation:
    """A stable ``stablehlo.sort`` of ``inputs`` along ``dim`` whose comparator is a copy of
    ``comparator``'s body. Stable: ties keep the earlier element
    first, as chlo.top_k and jnp.argsort do."""
    sort = ir.Operation.create(
        "stablehlo.sort", results=[v.type for v in inputs], operands=inputs,
        attributes={"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim),
                    "is_stable": ir.BoolAttr.get(True)},
        regions=1, ip=ip)
    copy_body_into(sort, comparator, ip)
    return sort


def _head(value: ir.Value, result: ir.RankedTensorType, ip: ir.InsertionPoint) -> ir.Value:
    """The first elements of ``value``, as many per dimension as ``result`` has."""
    shape = result.shape
    array = ir.DenseI64ArrayAttr.get
    head = ir.Operation.create(
        "stablehlo.slice", results=[result], operands=[value],
        attributes={"start_indices": array([0] * len(shape)), "limit_indices": array(list(shape)),
                    "strides": array([1] * len(shape))},
        ip=ip)
    return head.results[0]
