"""xla-diagonal-sums: a sum of a matrix masked to its diagonal as a sum of
the diagonal's elements (jnp.trace, jnp.einsum("ii->"), jnp.einsum("ii->i"),
their batched forms "bii->b", "bii->bi", and jnp.trace(offset=k))."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops
from xlac.passes.ingest.unroll_short_loops import defining_op as _owner


class DiagonalSums(ModulePass):
    """A float `stablehlo.reduce` with an add body and a +0.0 constant init, of
    `select(iota0 == iota1, x, +0.0)` on a 2-D x (N x M), reads only the
    diagonal: x flattened, strided by M + 1, its first min(N, M) elements.
    Reduced over both dims it becomes the reduce of that diagonal; over one
    dim (the kept one no longer than the reduced one: every result element
    has its diagonal element) `+0.0 + diagonal`.

    Why: JAX lowers these einsums to the mask; summed whole, it was a
    reduction over every dim of a 2-D nest with `linalg.index` in its body,
    which has no vector plan: 4M scalar steps for a 2000 x 2000 trace, where
    2000 elements carry the result. The masked-off elements add +0.0, which
    changes no sum started from +0.0 (a sum from +0.0 is never -0.0): the
    diagonal of "ii->i" is bit-identical (0.0 + x[i, i], -0.0 as +0.0, a NaN
    off the diagonal dropped as the select dropped it); the trace is the same
    terms, summed in the 1-D reduction's order (lanes, then across them)
    rather than one by one.

    Batched: the 2-D mask broadcast (dims = the last two) over leading dims
    of x (B... x N x M) takes x reshaped to B... x (N*M), sliced strided in
    the last dim. Offset: iota0 + k == iota1 (k an integer splat, through a
    same-type convert, its add unable to wrap) starts the slice at k (k >= 0)
    or -k*M; taken only where both matrix dims are summed (a trace).

        %m = stablehlo.compare EQ, (iota dim = 0), (iota dim = 1)
        %s = stablehlo.select %m, %x, (splat 0.0)
        %r = stablehlo.reduce(%s init: 0.0) applies stablehlo.add across dimensions = [0, 1]
      ->
        %f = stablehlo.reshape %x : tensor<NxMxf32> -> tensor<(N*M)xf32>
        %d = stablehlo.slice %f [0:(k-1)*(M+1)+1:M+1]       // k = min(N, M)
        %r = stablehlo.reduce(%d init: 0.0) applies stablehlo.add across dimensions = [0]
    """

    name = "xla-diagonal-sums"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)
    acts_on = frozenset({"stablehlo.reduce"})

    def run(self, module: ir.Operation) -> None:
        with ir.Location.unknown(module.context):
            for op in module_ops(module):
                if op.name == "stablehlo.reduce" and _diagonal_operand(op) is not None:
                    _rewrite(op, _diagonal_operand(op))
                    forget_module_ops()


def _splat(value: ir.Value):
    """The splat constant ``value`` holds (through a broadcast_in_dim of a
    scalar constant), as a Python number, or None."""
    op = _owner(value)
    if op is not None and op.name == "stablehlo.broadcast_in_dim":
        op = _owner(op.operands[0])
    if op is None or op.name != "stablehlo.constant":
        return None
    element = ir.RankedTensorType(op.results[0].type).element_type
    if not isinstance(element, (ir.FloatType, ir.IntegerType)):
        return None                   # complex: no cast of its attribute to a dense float or int one
    attr = op.attributes["value"]
    if isinstance(attr, ir.DenseFPElementsAttr) and attr.is_splat:
        return attr.get_splat_value().value
    if isinstance(attr, ir.DenseIntElementsAttr) and attr.is_splat:
        return ir.IntegerAttr(attr.get_splat_value()).value
    return None


def _plus_zero(value: ir.Value) -> bool:
    number = _splat(value)
    return isinstance(number, float) and number == 0.0 and math.copysign(1.0, number) > 0


def splat_offset(value: ir.Value) -> int | None:
    """The integer splat ``value`` holds, through a same-type convert, or None."""
    op = _owner(value)
    if op is not None and op.name == "stablehlo.broadcast_in_dim":
        value = op.operands[0]
        op = _owner(value)
    if op is not None and op.name == "stablehlo.convert" and op.operands[0].type == value.type:
        value = op.operands[0]
    number = _splat(value)
    return None if isinstance(number, float) else number


def iota_dim(value: ir.Value, size: int) -> tuple[int, int] | None:
    """(iota dimension, offset) of ``value`` (an iota, or one plus an integer
    splat), or None; None too where its integer type could wrap."""
    op = _owner(value)
    if op is not None and op.name == "stablehlo.add":
        for this, other in (op.operands, reversed(list(op.operands))):
            found, offset = iota_dim(this, size), splat_offset(other)
            if found is not None and offset is not None and found[1] == 0:
                element = ir.IntegerType(ir.RankedTensorType(value.type).element_type)
                if (offset < 0 and element.is_unsigned) or size + abs(offset) >= 2 ** (element.width - 1):
                    return None
                return found[0], offset
        return None
    if op is None or op.name != "stablehlo.iota":
        return None
    element = ir.RankedTensorType(value.type).element_type
    if not isinstance(element, ir.IntegerType) or size >= 2 ** (element.width - 1):
        return None
    return ir.IntegerAttr(op.attributes["iota_dimension"]).value, 0


def _diagonal_offset(mask: ir.Value, shape: list[int]) -> int | None:
    """k where ``mask`` is iota(rows) + k == iota(columns) on the last two dims
    of ``shape`` (2-D, or broadcast to them over leading batch dims), or None."""
    op = _owner(mask)
    if op is not None and op.name == "stablehlo.broadcast_in_dim":
        if list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"])) != [len(shape) - 2, len(shape) - 1]:
            return None
        op = _owner(op.operands[0])
    elif len(shape) != 2:
        return None
    if op is None or op.name != "stablehlo.compare" or "EQ" not in str(op.attributes["comparison_direction"]) or \
            list(ir.RankedTensorType(op.results[0].type).shape) != shape[-2:]:
        return None
    found = [iota_dim(v, max(shape[-2:])) for v in op.operands]
    if None in found or {found[0][0], found[1][0]} != {0, 1}:
        return None
    (_, row), (_, column) = sorted(found)             # iota0 + row == iota1 + column
    return row - column


def _diagonal_operand(op: ir.Operation) -> tuple[ir.Value, int] | None:
    """(x, k) of a reduce of select(iota0 + k == iota1, x, +0.0) as documented, or None."""
    if len(op.operands) != 2 or not _plus_zero(op.operands[1]):
        return None
    block = op.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    if len(body) != 2 or body[0].name != "stablehlo.add" or \
            set(body[0].operands) != set(block.arguments) or len(block.arguments) != 2:
        return None
    select = _owner(op.operands[0])
    if select is None or select.name != "stablehlo.select" or not _plus_zero(select.operands[2]):
        return None
    type_ = ir.RankedTensorType(select.results[0].type)
    if type_.rank < 2 or not type_.has_static_shape or not isinstance(type_.element_type, ir.FloatType):
        return None
    shape, rank = list(type_.shape), type_.rank
    k = _diagonal_offset(select.operands[0], shape)
    if k is None or _count(shape[-2:], k) <= 0:
        return None
    dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    if rank - 2 in dims and rank - 1 in dims:
        return select.operands[1], k             # traces (summed over batch dims too, if asked)
    if k == 0 and len(dims) == 1 and dims[0] >= rank - 2 and \
            shape[2 * rank - 3 - dims[0]] <= shape[dims[0]]:
        return select.operands[1], k             # diagonals
    return None


def _count(matrix: list[int], k: int) -> int:
    rows, columns = matrix
    return min(rows, columns - k) if k >= 0 else min(rows + k, columns)


def _maker(op: ir.Operation, element: ir.Type):
    """make(name, operands, shape, attributes): an op of one ``element`` tensor before ``op``."""
    point = ir.InsertionPoint(op)

    def make(name, operands, shape, attributes):
        return ir.Operation.create(name, results=[ir.RankedTensorType.get(shape, element)], operands=operands,
                                   attributes=attributes, ip=point, loc=op.location).results[0]
    return make


def diagonal_slice(op: ir.Operation, x: ir.Value, first: int, count: int) -> ir.Value:
    """Before ``op``: ``count`` elements of the diagonal of x's last two dims
    (B... x N x M) from flat position ``first``: x reshaped to B... x (N*M),
    sliced with stride M + 1."""
    type_ = ir.RankedTensorType(x.type)
    *batch, rows, columns = type_.shape
    make = _maker(op, type_.element_type)
    flat = make("stablehlo.reshape", [x], [*batch, rows * columns], {})
    return make("stablehlo.slice", [flat], [*batch, count], {
        "start_indices": ir.DenseI64ArrayAttr.get([0] * len(batch) + [first]),
        "limit_indices": ir.DenseI64ArrayAttr.get(batch + [first + (count - 1) * (columns + 1) + 1]),
        "strides": ir.DenseI64ArrayAttr.get([1] * len(batch) + [columns + 1])})


def _rewrite(op: ir.Operation, operand: tuple[ir.Value, int]) -> None:
    x, k = operand
    type_ = ir.RankedTensorType(x.type)
    *batch, rows, columns = type_.shape
    count = _count([rows, columns], k)
    element = type_.element_type
    make = _maker(op, element)
    diagonal = diagonal_slice(op, x, k if k >= 0 else -k * columns, count)
    dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    if len(batch) in dims and len(batch) + 1 in dims:
        select = _owner(op.operands[0])
        op.operands[0] = diagonal                    # the same reduce, of the diagonals
        op.attributes["dimensions"] = ir.DenseI64ArrayAttr.get([d for d in dims if d <= len(batch)])
        _erase_unused(select)
        return
    result = ir.RankedTensorType.get([*batch, count], element)
    zero = make("stablehlo.constant", [], [*batch, count],
                {"value": ir.DenseElementsAttr.get_splat(result, ir.FloatAttr.get(element, 0.0))})
    op.results[0].replace_all_uses_with(make("stablehlo.add", [zero, diagonal], [*batch, count], {}))
    select = _owner(op.operands[0])
    op.erase()
    _erase_unused(select)


def _erase_unused(op: ir.Operation | None) -> None:
    """Erase ``op`` if nothing reads it, then so its operands' unread definers
    (the mask: the select, the compare, the iotas; all before the reduce)."""
    if op is None or any(True for result in op.results for _ in result.uses):
        return
    owners = [_owner(value) for value in op.operands]
    op.erase()
    for owner in owners:
        _erase_unused(owner)
