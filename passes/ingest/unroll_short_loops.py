"""xla-unroll-short-loops: a `stablehlo.while` of a few known trips -> its body, repeated."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops, nested_ops
from xlac.record import record

MAX_TRIPS = 8               # jax.random's threefry: 5 rounds of 4
MAX_UNROLLED_OPS = 500      # trips x body ops: beyond it compile time costs more than the loop
_CONTROL_FLOW = {"stablehlo.while", "stablehlo.if", "stablehlo.case"}


@record
class UnrollShortLoops(ModulePass):
    """Replace a `stablehlo.while` counting from a constant to a constant by
    one (a `fori_loop`) by copies of its body when it runs at most
    `max-trips` times.

    Why: a loop is a kernel boundary: jax.random's threefry (5 rounds over
    the whole array) ran as 5 passes over memory, each round's elementwise
    ops in a kernel of their own; unrolled, xla-fuse makes one loop of all
    rounds, as XLA's while-loop unroller lets it. Run after inlining (the
    body calls jax's `closed_call`) and before xla-fuse.
    Example: `while (i = 0; i < 2; i += 1) { x = x * x }` becomes
    `x1 = x * x; x2 = x1 * x1`.
    """

    name = "xla-unroll-short-loops"

    acts_on = frozenset({"stablehlo.while"})
    max_trips: int = MAX_TRIPS

    def run(self, module: ir.Operation) -> None:
        # innermost first: unrolling an outer loop erases the ops found inside it
        for op in reversed(module_ops(module)):
            if op.name != "stablehlo.while":
                continue
            trips = trip_count(op)
            inside = nested_ops(op)
            # loops in loops stay: random_gamma's nested rejection loops, unrolled,
            # took 8x longer to compile (210 s) for no gain at run time
            if trips is None or trips > self.max_trips or trips * len(inside) > MAX_UNROLLED_OPS \
                    or any(o.name in _CONTROL_FLOW for o in inside):
                continue
            _unroll(op, op.regions[1].blocks[0], trips)


def trip_count(op: ir.Operation) -> int | None:
    """Trips of `for (i = c0; i < c1; i += 1)` in `op`, else None."""
    cond = op.regions[0].blocks[0]
    body = op.regions[1].blocks[0]
    ops = [o.operation for o in cond.operations]
    compare = defining_op(ops[-1].operands[0]) if ops[-1].operands else None
    if compare is None or compare.name != "stablehlo.compare" \
            or "LT" not in str(compare.attributes["comparison_direction"]):
        return None
    counter, bound = compare.operands
    if not isinstance(counter.owner, ir.Block) or counter.owner != cond:
        return None
    k = ir.BlockArgument(counter).arg_number
    last, start = scalar_constant(bound), scalar_constant(op.operands[k])
    step = _increment(body, k)
    if last is None or start is None or step != 1 or _is_unsigned(counter):
        return None
    return max(0, last - start)


def scalar_constant(value: ir.Value) -> int | None:
    owner = defining_op(value)
    if owner is None or owner.name != "stablehlo.constant":
        return None
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseIntElementsAttr) or ir.RankedTensorType(value.type).rank != 0:
        return None
    return int(attr[0])


def _increment(body: ir.Block, k: int) -> int | None:
    """The constant the body adds to its argument ``k`` for result ``k``."""
    terminator = [o.operation for o in body.operations][-1]
    add = defining_op(terminator.operands[k])
    if add is None or add.name != "stablehlo.add":
        return None
    a, b = add.operands
    if a == body.arguments[k]:
        return scalar_constant(b)
    if b == body.arguments[k]:
        return scalar_constant(a)
    return None


def defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _is_unsigned(value: ir.Value) -> bool:
    return str(ir.RankedTensorType(value.type).element_type).startswith("ui")


def _unroll(op: ir.Operation, body: ir.Block, trips: int) -> None:
    values = list(op.operands)
    ip = ir.InsertionPoint(op)
    ops = [o.operation for o in body.operations]
    for _ in range(trips):
        mapping = dict(zip(body.arguments, values))
        for inner in ops[:-1]:
            copy = inner.clone(ip=ip)
            _remap(copy, mapping)
            mapping.update(zip(inner.results, copy.results))
        values = [mapping.get(v, v) for v in ops[-1].operands]
    for result, value in zip(op.results, values):
        result.replace_all_uses_with(value)
    op.erase()


def _remap(copy: ir.Operation, mapping: dict) -> None:
    """Point ``copy``'s operands, and those of ops in its regions (captured
    values), at this trip's values."""
    for target in [copy, *nested_ops(copy)]:
        for index, value in enumerate(target.operands):
            if value in mapping:
                target.operands[index] = mapping[value]
