"""Host control flow in a CUDA schedule: loops and branches whose regions are
step lists of their own, and the scalars they steer by, read back from the device.

``xlac.targets.cuda.schedule`` reads the entry function; an ``scf.while``,
a counted ``scf.for`` (``xla.host_loop``: xla-gpu-counted-loops), ``scf.if``,
``scf.index_switch`` or a select of buffers in it becomes one of these steps:

* ``ReadBack(value, source, offset, element)``: a ``memref.load`` the host
  branches on: one element copied to pinned host memory, the stream synchronized;
* ``Loop``: ``init`` bound to the ``state`` names (the before region's
  arguments), ``before`` run, ``predicate`` read; while it holds, the
  ``forwarded`` values bound to the body's ``arguments``, ``body`` run, the
  ``yielded`` values carried into the next iteration; at the end ``results``
  are bound to the last forwarded values. A counted loop (``trips`` >= 0) has
  no before region: the body runs ``trips`` times, its arguments the state;
* ``Branch``: ``regions[k]`` runs where ``keys[k - 1]`` equals the ``selector``,
  else ``regions[0]`` (the default: scf.if's else, index_switch's default);
  ``results`` are bound to that region's ``yielded`` values.

Names in regions are bound to pointers at run time (``xlac.targets.cuda.control_runtime``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from xlac.dtypes import element_bytes
from xlac.errors import CompileError, error

TYPE_CHECKING = False          # the runtime loads a cached schedule without MLIR: ir only to read one
if TYPE_CHECKING:
    from xlac.mlir import ir

CASTS = ("arith.index_cast", "arith.index_castui", "arith.extui", "arith.extsi")
_UNSIGNED_CASTS = ("arith.index_castui", "arith.extui")
FLOW_OPS = ("scf.while", "scf.for", "scf.if", "scf.index_switch", "arith.select", "memref.load", *CASTS)
TERMINATORS = ("scf.yield", "scf.condition", "func.return")


@dataclass(frozen=True)
class ReadBack:
    value: str
    source: str
    offset: int                     # bytes from the start of the source's buffer
    element: str                    # i1, i8 ... i64 (signed), u8 ... u64


@dataclass(frozen=True)
class Loop:
    init: tuple[str, ...]
    state: tuple[str, ...]
    before: tuple
    predicate: str
    forwarded: tuple[str, ...]
    arguments: tuple[str, ...]
    body: tuple
    yielded: tuple[str, ...]
    results: tuple[str, ...]
    nbytes: tuple[int, ...]         # of each carried buffer
    trips: int = -1                 # a counted loop's; -1: while the predicate holds


@dataclass(frozen=True)
class Branch:
    selector: str
    keys: tuple[int, ...]
    regions: tuple[tuple, ...]
    yielded: tuple[tuple[str, ...], ...]
    results: tuple[str, ...]


def nested_steps(step) -> list[tuple]:
    """The step lists inside ``step`` (none for a plain step)."""
    if isinstance(step, Loop):
        return [step.before, step.body]
    if isinstance(step, Branch):
        return list(step.regions)
    return []


def walk_steps(steps):
    """Every step of ``steps``, those in loops and branches included (pre-order)."""
    for step in steps:
        yield step
        for inner in nested_steps(step):
            yield from walk_steps(inner)


def map_steps(steps, change) -> list:
    """``steps`` with ``change`` applied to each plain step, at any depth."""
    mapped = []
    for step in steps:
        if isinstance(step, Loop):
            step = replace(step, before=tuple(map_steps(step.before, change)),
                           body=tuple(map_steps(step.body, change)))
        elif isinstance(step, Branch):
            step = replace(step, regions=tuple(tuple(map_steps(r, change)) for r in step.regions))
        else:
            step = change(step)
        mapped.append(step)
    return mapped


def has_control_flow(steps) -> bool:
    return any(isinstance(step, (Loop, Branch, ReadBack)) for step in steps)


def step_fields(step) -> dict:
    return {f.name: getattr(step, f.name) for f in fields(step)}


def read_flow(op: ir.Operation, reader):
    """The step of host control flow ``op`` (None for a cast: its name is the read value's).

    ``reader`` reads the steps of a block (``steps``), names values (``bind``,
    ``ref``) and knows the constants (``constant``) and buffer sizes (``nbytes``)."""
    if op.name in CASTS:
        reader.alias(op.result, op.operands[0])
        return None
    if op.name == "memref.load":
        return _read_back(op, reader)
    if op.name == "arith.select":
        _whole_buffers(op, [op.result])
        a, b = (reader.ref(v) for v in list(op.operands)[1:])
        return Branch(reader.ref(op.operands[0]), (1,), ((), ()), ((b,), (a,)),
                      (reader.bind(op.result),))
    if op.name == "scf.while":
        return _read_while(op, reader)
    if op.name == "scf.for":
        return _read_for(op, reader)
    return _read_branch(op, reader)


def _read_back(op, reader) -> ReadBack:
    from xlac.mlir import ir
    memref = ir.MemRefType(op.operands[0].type)
    strides, offset = memref.get_strides_and_offset()
    indices = [reader.constant(v) for v in list(op.operands)[1:]]
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    if None in indices or offset == dynamic or dynamic in strides:
        _refuse(op)
    element = str(memref.element_type)
    element = "i64" if element == "index" else element
    if not element.startswith("i"):
        _refuse(op)
    if element != "i1" and _read_unsigned(op):
        element = "u" + element[1:]
    start = offset + sum(i * s for i, s in zip(indices, strides))
    return ReadBack(reader.bind(op.result), reader.ref(op.operands[0]),
                    start * element_bytes(memref.element_type), element)


def _read_unsigned(op) -> bool:
    users = [use.owner for use in op.result.uses]
    return any(u.name in _UNSIGNED_CASTS or (u.name in CASTS and _read_unsigned(u)) for u in users)


def _read_while(op, reader) -> Loop:
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    init = tuple(reader.ref(v) for v in op.operands)
    state = tuple(reader.bind(a) for a in before.arguments)
    before_steps = tuple(reader.steps(before))
    condition = _terminator(before)
    predicate = reader.ref(condition.operands[0])
    forwarded = tuple(reader.ref(v) for v in list(condition.operands)[1:])
    arguments = tuple(reader.bind(a) for a in after.arguments)
    body = tuple(reader.steps(after))
    yielded = tuple(reader.ref(v) for v in _terminator(after).operands)
    return Loop(init, state, before_steps, predicate, forwarded, arguments, body, yielded,
                _results(op, reader), _carried(op, reader))


def _read_for(op, reader) -> Loop:
    block = op.regions[0].blocks[0]
    low, high, step = (reader.constant(v) for v in list(op.operands)[:3])
    if None in (low, high, step) or step <= 0 or list(block.arguments[0].uses):
        _refuse(op)
    init = tuple(reader.ref(v) for v in list(op.operands)[3:])
    arguments = tuple(reader.bind(a) for a in list(block.arguments)[1:])
    body = tuple(reader.steps(block))
    yielded = tuple(reader.ref(v) for v in _terminator(block).operands)
    return Loop(init, (), (), "", (), arguments, body, yielded, _results(op, reader),
                _carried(op, reader), max(0, -((low - high) // step)))


def _read_branch(op, reader) -> Branch:
    from xlac.mlir import ir
    selector = reader.ref(op.operands[0])
    if op.name == "scf.if":                            # regions: then, else; as a Branch: else, then
        keys, regions = (1,), [op.regions[1], op.regions[0]]
    else:
        keys, regions = tuple(ir.DenseI64ArrayAttr(op.attributes["cases"])), list(op.regions)
    steps, yielded = [], []
    for region in regions:
        block = region.blocks[0] if region.blocks else None
        steps.append(tuple(reader.steps(block)) if block else ())
        yielded.append(tuple(reader.ref(v) for v in _terminator(block).operands) if block else ())
    _whole_buffers(op, op.results)
    return Branch(selector, keys, tuple(steps), tuple(yielded), _results(op, reader))


def _results(op, reader) -> tuple[str, ...]:
    return tuple(reader.bind(r) for r in op.results)


def _carried(op, reader) -> tuple[int, ...]:
    """The size of each buffer a loop carries from one iteration to the next (a
    while's before region may forward fewer to its body)."""
    carried = list(op.operands)[3:] if op.name == "scf.for" else list(op.operands)
    _whole_buffers(op, list(op.results) + carried)
    return tuple(reader.nbytes(v.type) for v in carried)


def _whole_buffers(op, values) -> None:
    """Control flow carries whole buffers only: a pointer is rebound or copied from its start."""
    from xlac.mlir import ir
    for value in values:
        if not isinstance(value.type, ir.MemRefType) or "strided" in str(value.type) \
                or not ir.MemRefType(value.type).has_static_shape:
            raise CompileError(error(f"'{op.name}' carries a value of type {value.type}; host control "
                                     "flow on cuda carries whole buffers only", op.location))


def _terminator(block: ir.Block) -> ir.Operation:
    return list(block.operations)[-1].operation


def _refuse(op):
    raise CompileError(error(f"'{op.name}' is left in the GPU host code in a form the host cannot "
                             "run (a read-back needs one element at constant indices, a loop "
                             "constant bounds); not supported on cuda", op.location))
