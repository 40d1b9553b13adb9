"""xla-gpu-counted-loops: a while that counts from a constant to a constant -> a counted scf.for."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass
from xlac.passes.gpu.launch_ops import HOST_LOOP, host_blocks

# cmpi predicates as "counter OP bound", and the same with the operands swapped
_SWAPPED = {"slt": "sgt", "sle": "sge", "sgt": "slt", "sge": "sle",
            "ult": "ugt", "ule": "uge", "ugt": "ult", "uge": "ule", "ne": "ne", "eq": "eq"}
_BEFORE_OPS = ("linalg.generic", "tensor.extract", "tensor.empty", "arith.constant", "scf.condition")


class GpuCountedLoops(ModulePass):
    """Rewrite a host scf.while whose trip count is known at compile time (a
    counter from a constant, compared with a constant, stepped by a constant:
    fori_loop and scan) as an ``scf.for`` of that many trips marked ``xla.host_loop``.

    Why: a data-dependent while reads its predicate back from the device every
    iteration (a copy to pinned memory and a stream synchronization); as XLA
    does with a known trip count, the host then runs the body N times and reads
    nothing back. The counter stays a carried tensor (the body may read it).
    Runs on tensors, before bufferization. Example:

        scf.while (%i = %c0, %x = ...) { %p = linalg.generic ins(%i) {cmpi slt, %in, %c8}
                                          scf.condition(extract %p) %i, %x }
                  do { yield (linalg.generic ins(%i) {addi %in, %c1}), ... }
      becomes
        scf.for %t = %c0 to %c8 step %c1 iter_args(%i = %c0, %x = ...) { ... } {xla.host_loop}
    """

    name = "xla-gpu-counted-loops"

    def run(self, module: ir.Operation) -> None:
        loops = [op.operation for block in host_blocks(module) for op in block.operations
                 if op.operation.name == "scf.while"]
        for loop in reversed(loops):                  # inner loops first: their blocks stay valid
            trips = trip_count(loop)
            if trips is not None:
                _to_for(loop, trips)


def trip_count(loop: ir.Operation) -> int | None:
    """The number of times ``loop``'s body runs, if the counter pattern fixes it."""
    before, after = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
    ops = [op.operation for op in before.operations]
    condition = ops[-1]
    if any(op.name not in _BEFORE_OPS for op in ops) or \
            list(condition.operands)[1:] != list(before.arguments):
        return None                                   # the condition does more than compare
    compare = _scalar_op(condition.operands[0], "tensor.extract")
    if compare is None or compare[1].name != "arith.cmpi":
        return None
    generic, cmpi = compare
    sides = [_operand(generic, v, before) for v in cmpi.operands]
    predicate = _predicate(cmpi)
    if sides[1] is not None and sides[1][0] == "counter":
        sides, predicate = sides[::-1], _SWAPPED[predicate]
    if None in sides or sides[0][0] != "counter" or sides[1][0] != "const":
        return None
    position, bound = sides[0][1], sides[1][1]
    start, step = _start(loop, position), _step(after, position)
    if start is None or step is None:
        return None
    width = ir.IntegerType(ir.RankedTensorType(before.arguments[position].type).element_type).width
    return _trips(predicate, start, bound, step, width)


def _trips(predicate: str, start: int, bound: int, step: int, width: int) -> int | None:
    """How many steps from ``start`` keep ``counter <predicate> bound`` true, if no
    value on the way wraps around ``width`` bits (else None: leave the loop alone)."""
    unsigned = predicate.startswith("u")
    low, high = (0, 2**width - 1) if unsigned else (-2**(width - 1), 2**(width - 1) - 1)
    start, bound = _as(start, width, unsigned), _as(bound, width, unsigned)
    if predicate[1:] in ("le", "ge"):                 # counter <= n: counter < n + 1
        predicate, bound = predicate[0] + predicate[1] + "t", bound + (1 if predicate[1] == "l" else -1)
    if predicate == "ne":
        if step == 0 or (bound - start) % step or (bound - start) // step < 0:
            return None
        trips = (bound - start) // step
    elif predicate[1:] == "lt" and step > 0:
        trips = max(0, -((start - bound) // step))
    elif predicate[1:] == "gt" and step < 0:
        trips = max(0, -((bound - start) // -step))
    else:
        return None
    return trips if low <= start + trips * step <= high else None


def _as(value: int, width: int, unsigned: bool) -> int:
    value &= 2**width - 1
    return value if unsigned or value < 2**(width - 1) else value - 2**width


def _predicate(cmpi: ir.Operation) -> str:
    return str(cmpi).split("arith.cmpi", 1)[1].split(",", 1)[0].strip()


def _scalar_op(value: ir.Value, reader: str):
    """(generic, op) where ``value`` is read by ``reader`` from a 0-d linalg.generic
    whose region is one op and its yield; else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != reader:
        return None
    source = owner.operands[0] if reader == "tensor.extract" else value
    generic = source.owner
    if isinstance(generic, ir.Block) or generic.name != "linalg.generic" or \
            list(ir.ArrayAttr(generic.attributes["iterator_types"])):
        return None
    body = [op.operation for op in generic.regions[0].blocks[0].operations]
    if len(body) != 2 or list(body[1].operands) != [body[0].result]:
        return None
    return generic.operation, body[0]


def _operand(generic: ir.Operation, value: ir.Value, block: ir.Block):
    """("counter", k) for a read of ``block``'s argument k, ("const", n) for a constant."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        inputs = list(ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"]))[0]
        index = value.arg_number
        if owner != generic.regions[0].blocks[0] or index >= inputs:
            return None
        tensor = generic.operands[index]
        if isinstance(tensor.owner, ir.Block):
            return ("counter", tensor.arg_number) if tensor.owner == block else None
        return _constant(tensor)
    return _constant(value)


def _constant(value: ir.Value):
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return ("const", ir.IntegerAttr(attr).value)
    if isinstance(attr, ir.DenseIntElementsAttr) and attr.is_splat:
        return ("const", ir.IntegerAttr(attr.get_splat_value()).value)
    return None


def _start(loop: ir.Operation, position: int) -> int | None:
    found = _constant(loop.operands[position])
    return found[1] if found else None


def _step(after: ir.Block, position: int) -> int | None:
    """The constant the body adds to counter ``position`` (it must add nothing else)."""
    terminator = list(after.operations)[-1].operation
    found = _scalar_op(terminator.operands[position], "linalg.generic")
    if found is None or found[1].name != "arith.addi":
        return None
    generic, addi = found
    sides = [_operand(generic, v, after) for v in addi.operands]
    if sides[1] == ("counter", position):
        sides.reverse()
    if sides[0] != ("counter", position) or sides[1] is None or sides[1][0] != "const":
        return None
    return sides[1][1]


def _to_for(loop: ir.Operation, trips: int) -> None:
    after = loop.regions[1].blocks[0]
    with loop.context, loop.location, ir.InsertionPoint(loop):
        index = ir.IndexType.get()
        bounds = [ir.Operation.create("arith.constant", results=[index],
                                      attributes={"value": ir.IntegerAttr.get(index, n)}).result
                  for n in (0, trips, 1)]
        counted = ir.Operation.create("scf.for", results=[r.type for r in loop.results],
                                      operands=[*bounds, *loop.operands], regions=1,
                                      attributes={HOST_LOOP: ir.UnitAttr.get()})
        body = counted.regions[0].blocks.append(index, *[a.type for a in after.arguments])
    for old, new in zip(after.arguments, list(body.arguments)[1:]):
        old.replace_all_uses_with(new)
    for op in list(after.operations):
        body.append(op.operation)
    for old, new in zip(loop.results, counted.results):
        old.replace_all_uses_with(new)
    loop.erase()
