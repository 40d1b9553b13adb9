"""xla-hoist-scan-products: a scan step's product of its input slice and a
loop-invariant operand -> one product of the whole input before the loop."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, is_within, module_ops
from xlac.passes.ingest.unroll_short_loops import defining_op, scalar_constant, trip_count

MAX_PRODUCT_BYTES = 64 << 20     # the hoisted product is held for the whole loop
_MAX_INVARIANT_OPS = 16          # ops cloned out of the loop to make the invariant operand


class HoistScanProducts(ModulePass):
    """In a `stablehlo.while` counting i from 0 to N by one (a `lax.scan`),
    replace a `dot_general` of the step's slice of a sequence the loop carries
    unchanged (`reshape(dynamic_slice(xs, i, 0, ...))`, xs of N rows) with a
    loop-invariant operand by the step's slice of one `dot_general` of all of
    xs, made before the loop.

    Why: an RNN's input projection (x_t W_x) does not depend on the carried
    state, yet ran as N small products, each a parallel region of its own
    (the flax LSTM scan: 128 of its 256 fork-joins per call, 8x128x1024 and
    8x256x1024 products). One 512-row product runs at full matmul speed
    (31.6 -> 24.3 ms, XLA 29.6). Each element is the same sum in the same k
    order (the matmul schedules split rows and columns among threads, never
    k): the same bits. Only [m, k] x [k, n] products of m > 1 rows: a vector
    step, or weights stored [n, k], may be lowered step by step otherwise.
    The operand is invariant when it is carried unchanged,
    defined outside the loop, or made from such values by a few ops without
    regions (the gate weights' concatenation), which are copied out.
    Example: `while (i < 64) { h = f(dot(xs[i], W), h) }` becomes
    `p = dot(xs, W); while (i < 64) { h = f(p[i], h) }`.
    """

    name = "xla-hoist-scan-products"

    acts_on = frozenset({"stablehlo.while"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.while":
                _hoist_products(op)


def _hoist_products(loop: ir.Operation) -> None:
    trips = trip_count(loop)
    counter = _counter(loop) if trips is not None else None
    if counter is None or scalar_constant(loop.operands[counter]) != 0:
        return
    body = loop.regions[1].blocks[0]
    carried = _carried_unchanged(body)
    for dot in [o.operation for o in body.operations]:
        if dot.name != "stablehlo.dot_general":
            continue
        xs = _sliced_sequence(dot.operands[0], body, counter, trips, carried)
        if xs is None or not _row_times_matrix(dot) or _bytes(dot, trips) > MAX_PRODUCT_BYTES:
            continue
        weights = _invariant(dot.operands[1], loop, body, carried, budget=[_MAX_INVARIANT_OPS])
        if weights is None:
            continue
        _replace(dot, loop, body, counter, xs, weights(ir.InsertionPoint(loop)), trips)


def _counter(loop: ir.Operation) -> int | None:
    cond = loop.regions[0].blocks[0]
    compare = defining_op([o.operation for o in cond.operations][-1].operands[0])
    value = compare.operands[0]
    return ir.BlockArgument(value).arg_number if isinstance(value.owner, ir.Block) else None


def _carried_unchanged(body: ir.Block) -> set[int]:
    """Arguments the body yields back as they came (weights, the input sequence)."""
    terminator = [o.operation for o in body.operations][-1]
    return {i for i, value in enumerate(terminator.operands) if value == body.arguments[i]}


def _sliced_sequence(value: ir.Value, body: ir.Block, counter: int, trips: int,
                     carried: set[int]) -> int | None:
    """The argument number of xs where ``value`` is reshape(dynamic_slice(xs,
    i, 0, ...)) of one row of an unchanged xs of ``trips`` rows, else None."""
    reshape = defining_op(value)
    if reshape is None or reshape.name != "stablehlo.reshape":
        return None
    sliced = defining_op(reshape.operands[0])
    if sliced is None or sliced.name != "stablehlo.dynamic_slice":
        return None
    xs, start, *rest = sliced.operands
    shape = ir.RankedTensorType(xs.type).shape
    sizes = list(ir.DenseI64ArrayAttr(sliced.attributes["slice_sizes"]))
    if not isinstance(xs.owner, ir.Block) or xs.owner != body or start != body.arguments[counter] \
            or any(scalar_constant(r) != 0 for r in rest) or shape[0] != trips \
            or sizes != [1, *shape[1:]] or list(ir.RankedTensorType(value.type).shape) != shape[1:]:
        return None
    number = ir.BlockArgument(xs).arg_number
    return number if number in carried else None


def _row_times_matrix(dot: ir.Operation) -> bool:
    """[m, k] x [k, n], m > 1, no batch: a matmul step by step as after. A
    vector times a matrix, or a matrix stored [n, k], may be lowered step by
    step another way (a dot product per column), whose sums could round
    otherwise than the hoisted matmul's: those stay."""
    lhs, rhs = (ir.RankedTensorType(v.type) for v in dot.operands)
    numbers = str(dot.attributes["dot_dimension_numbers"])
    return lhs.rank == 2 and rhs.rank == 2 and lhs.shape[0] > 1 and "batching" not in numbers \
        and _dims(numbers, "lhs_contracting_dimensions") == [1] \
        and _dims(numbers, "rhs_contracting_dimensions") == [0]


def _bytes(dot: ir.Operation, trips: int) -> float:
    """Bytes of the hoisted product; infinite for an element of no width (complex)."""
    result = ir.RankedTensorType(dot.results[0].type)
    width = getattr(result.element_type, "width", None)
    if not width:
        return float("inf")
    count = trips
    for extent in result.shape:
        count *= extent
    return count * max(1, width // 8)


def _invariant(value: ir.Value, loop: ir.Operation, body: ir.Block, carried: set[int], budget: list):
    """A function making ``value``'s loop-invariant equal before the loop (at
    an insertion point), or None where ``value`` changes from step to step."""
    if isinstance(value.owner, ir.Block):
        if value.owner != body:
            return lambda ip: value                      # a block around the loop
        number = ir.BlockArgument(value).arg_number
        return (lambda ip: loop.operands[number]) if number in carried else None
    op = value.owner.operation
    if op.parent != loop:
        return None if is_within(op, loop) else (lambda ip: value)
    budget[0] -= 1
    if budget[0] < 0 or len(op.regions) or not op.name.startswith("stablehlo."):
        return None
    makers = [_invariant(operand, loop, body, carried, budget) for operand in op.operands]
    if any(m is None for m in makers):
        return None
    index = list(op.results).index(value)

    def make(ip):
        operands = [maker(ip) for maker in makers]      # made first: they come before the copy
        copy = op.clone(ip=ip)
        for i, operand in enumerate(operands):
            copy.operands[i] = operand
        return copy.results[index]
    return make


def _replace(dot: ir.Operation, loop: ir.Operation, body: ir.Block, counter: int, xs: int,
             weights: ir.Value, trips: int) -> None:
    """Make the whole product before ``loop``, and ``dot``'s row of it inside."""
    result = ir.RankedTensorType(dot.results[0].type)
    with dot.context, dot.location:
        whole_type = ir.RankedTensorType.get([trips, *result.shape], result.element_type)
        attributes = {name: dot.attributes[name] for name in dot.attributes}
        attributes["dot_dimension_numbers"] = ir.Attribute.parse(
            "#stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>")
        whole = ir.Operation.create("stablehlo.dot_general", results=[whole_type],
                                    operands=[loop.operands[xs], weights], attributes=attributes,
                                    ip=ir.InsertionPoint(loop)).result
        ip = ir.InsertionPoint(dot)
        step = body.arguments[counter]
        zero = ir.Operation.create("stablehlo.constant", results=[step.type], attributes={
            "value": ir.DenseElementsAttr.get_splat(step.type, ir.IntegerAttr.get(
                ir.RankedTensorType(step.type).element_type, 0))}, ip=ip).result
        row_type = ir.RankedTensorType.get([1, *result.shape], result.element_type)
        row = ir.Operation.create("stablehlo.dynamic_slice", results=[row_type],
                                  operands=[whole, step, *[zero] * result.rank],
                                  attributes={"slice_sizes": ir.DenseI64ArrayAttr.get(
                                      [1, *result.shape])}, ip=ip).result
        flat = ir.Operation.create("stablehlo.reshape", results=[result], operands=[row], ip=ip).result
    dot.results[0].replace_all_uses_with(flat)
    sequence_row = defining_op(dot.operands[0])
    dot.erase()
    _erase_unused(sequence_row)


def _dims(numbers: str, key: str) -> list[int]:
    text = numbers.split(key + " = [", 1)[1].split("]", 1)[0]
    return [int(d) for d in text.split(",") if d.strip()]


def _erase_unused(op: ir.Operation | None) -> None:
    """``op`` and the ops feeding it that nothing else reads any more."""
    while op is not None and not any(True for r in op.results for _ in r.uses):
        feeding = defining_op(op.operands[0]) if op.operands else None
        op.erase()
        op = feeding if feeding is not None and feeding.name in (
            "stablehlo.reshape", "stablehlo.dynamic_slice") else None
