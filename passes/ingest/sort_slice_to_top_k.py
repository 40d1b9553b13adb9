"""xla-sort-slice-to-top-k: a sort read only through its first k elements is a top-k."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.ingest.outline_top_k import MAX_K, call_top_k, fits
from xlac.passes.ingest.sort_order import comparator_order
from xlac.passes.lower.builders.top_k_keys import TopKOrder
from xlac.record import record


@record
class SortSliceToTopK(ModulePass):
    """Replace a `stablehlo.sort` of one key (and an iota along the sort
    dimension, its indices) whose every use is a slice of the first k <= 320
    elements along the sort dimension by a top-k call (xla-outline-top-k's),
    ascending or descending as the comparator says (see sort_order.py), the
    slices then reading its results. A sort of reversed operands whose
    results are only read reversed (jnp.sort(..., descending=True)) is the
    stable sort the other way round, and is taken as that.

    Why: that is how exporters that have no top_k write one (torch-mlir:
    aten.topk as sort + slice; jnp.argsort(x)[:k]; a composite's inlined
    decomposition), and the sort costs O(n log n) comparator calls where the
    top-k reads each element once. Ties keep the earlier element first, as
    the stable sort does (an unstable one may order them either way).
    Example: `%s:2 = sort(%x, iota) GT; slice %s#0 [0:4, 0:8]; slice %s#1 ...`
    becomes `%t:2 = call @xla_top_k_0(%x)` and the slices of `%t`.
    """

    name = "xla-sort-slice-to-top-k"

    acts_on = frozenset({"stablehlo.sort"})
    max_k: int = MAX_K

    def run(self, module: ir.Operation) -> None:
        for op in [o for o in module_ops(module) if o.name == "stablehlo.sort"]:
            with op.context, op.location:        # of the types and ops made here
                match = _match(op, self.max_k)
                if match is not None:
                    _rewrite(module, match)


@record(mutable=True)
class _Match:
    sort: ir.Operation
    dimension: int
    keys: ir.Value                    # what the top-k selects from
    index_type: str                   # the iota's element type (i32 when there is none)
    order: TopKOrder
    k: int
    slices: list[list[ir.Operation]]  # per sort result: the slices that read it
    reverses: list[ir.Operation]      # reverses of its results, to erase with it
    reverse_keys: bool                # the top-k reads ``keys`` reversed


def _match(sort: ir.Operation, max_k: int) -> _Match | None:
    if len(sort.operands) not in (1, 2):
        return None
    dimension = ir.IntegerAttr(sort.attributes["dimension"]).value
    dimension += len(ir.RankedTensorType(sort.operands[0].type).shape) if dimension < 0 else 0
    operands, readers, reverses, reverse_keys = _without_reverses(sort, dimension)
    element = str(ir.RankedTensorType(operands[0].type).element_type)
    order = comparator_order(sort, element)
    index_type = _iota_type(operands[1], dimension) if len(operands) == 2 else "i32"
    k = _head_length(readers, dimension)
    if order is None or index_type is None or k is None:
        return None
    if reverses:
        order = TopKOrder(smallest=not order.smallest, canonical=order.canonical)
    if not fits(_moved_type(operands[0], dimension, None), [], k, max_k):
        return None
    return _Match(sort, dimension, operands[0], index_type, order, k, readers, reverses,
                  reverse_keys)


def _without_reverses(sort: ir.Operation, dimension: int):
    """The sort's operands and each result's readers, seen through a reverse
    along the sort dimension of every use; the reverses of the results (those
    of the operands die with the sort: canonicalize); whether the keys must
    be reversed for that.

    reverse(sort(reverse(x))) is the stable sort of x the other way round;
    reverse(sort(x)) is that of reverse(x): jnp.sort(x, descending=True),
    whose ties come last index first. Only its values can be read so."""
    readers = [[use.owner for use in result.uses] for result in sort.results]
    inputs = [_reversed(operand.owner, dimension) for operand in sort.operands]
    outputs = [reader for users in readers for reader in users]
    if not outputs or not all(_reversed(op, dimension) for op in outputs):
        return list(sort.operands), readers, [], False
    seen = [[use.owner for reverse in users for use in reverse.results[0].uses] for users in readers]
    if all(inputs):
        return [op.operands[0] for op in inputs], seen, outputs, False
    if len(inputs) == 1:
        return list(sort.operands), seen, outputs, True
    return list(sort.operands), readers, [], False


def _reversed(owner, dimension: int) -> ir.Operation | None:
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.reverse":
        return None
    dimensions = list(ir.DenseI64ArrayAttr(owner.attributes["dimensions"]))
    return owner.operation if dimensions == [dimension] else None


def _iota_type(value: ir.Value, dimension: int) -> str | None:
    """The element type of ``value`` if it is an iota along ``dimension``."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.iota":
        return None
    element = str(ir.RankedTensorType(value.type).element_type)
    along = ir.IntegerAttr(owner.attributes["iota_dimension"]).value == dimension
    return element if along and element in ("i16", "i32", "i64") else None


def _head_length(readers: list[list[ir.Operation]], dimension: int) -> int | None:
    """The longest head the readers take, if each is a slice of a head along ``dimension``."""
    flat = [op for users in readers for op in users]
    if not flat or any(op.name != "stablehlo.slice" for op in flat):
        return None
    for op in flat:
        start = list(ir.DenseI64ArrayAttr(op.attributes["start_indices"]))
        strides = list(ir.DenseI64ArrayAttr(op.attributes["strides"]))
        if start[dimension] != 0 or strides[dimension] != 1:
            return None
    return max(list(ir.DenseI64ArrayAttr(op.attributes["limit_indices"]))[dimension] for op in flat)


def _moved_type(value: ir.Value, dimension: int, k: int | None,
                element: str | None = None) -> ir.Type:
    """``value``'s type with ``dimension`` moved last (and cut to ``k``)."""
    tensor = ir.RankedTensorType(value.type)
    shape = [n for d, n in enumerate(tensor.shape) if d != dimension]
    shape.append(tensor.shape[dimension] if k is None else k)
    element_type = ir.Type.parse(element, value.context) if element else tensor.element_type
    return ir.RankedTensorType.get(shape, element_type)


def _rewrite(module: ir.Operation, match: _Match) -> None:
    sort, dimension = match.sort, match.dimension
    rank = len(ir.RankedTensorType(match.keys.type).shape)
    last = dimension == rank - 1
    permutation = [d for d in range(rank) if d != dimension] + [dimension]
    keys = _reverse(sort, match.keys, dimension) if match.reverse_keys else match.keys
    keys = keys if last else _transpose(sort, keys, permutation)
    result_types = [_moved_type(match.keys, dimension, match.k),
                    _moved_type(match.keys, dimension, match.k, match.index_type)]
    results = call_top_k(module, sort, keys, result_types, match.k, match.order)
    if not last:
        inverse = [permutation.index(d) for d in range(rank)]
        results = [_transpose(sort, value, inverse) for value in results]
    for value, slices in zip(results, match.slices):
        for op in slices:
            op.operands[0] = value
    for op in [*match.reverses, sort]:
        op.erase()


def _reverse(anchor: ir.Operation, value: ir.Value, dimension: int) -> ir.Value:
    op = ir.Operation.create(
        "stablehlo.reverse", results=[value.type], operands=[value],
        attributes={"dimensions": ir.DenseI64ArrayAttr.get([dimension])},
        ip=ir.InsertionPoint(anchor))
    return op.results[0]


def _transpose(anchor: ir.Operation, value: ir.Value, permutation: list[int]) -> ir.Value:
    tensor = ir.RankedTensorType(value.type)
    shape = [tensor.shape[d] for d in permutation]
    op = ir.Operation.create(
        "stablehlo.transpose", results=[ir.RankedTensorType.get(shape, tensor.element_type)],
        operands=[value], attributes={"permutation": ir.DenseI64ArrayAttr.get(permutation)},
        ip=ir.InsertionPoint(anchor))
    return op.results[0]
