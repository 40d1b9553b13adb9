"""One kernel for a chain of row ops (row_chains.py): a block per row, the row on chip.

Thread t takes the row's points t, t + T, ... in every op of the chain, so a
value it keeps in shared memory for a later op is read back by the thread
that wrote it (no barrier). A row-wide value read by two ops (softmax's x,
read by the max and by exp) is loaded from global memory once, into a slot
of shared memory; a point value the chain writes and reads again (softmax's
exp) goes to a slot too, reusing one whose value is read no more. Each
reduction folds its points in a register, combines the block as the
reduction kernels do (gpu_kernel_emit.block_reduce: the same tree) and
broadcasts the row's value through shared memory to every thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from xlac.passes.gpu.gpu_kernel_emit import (
    block_reduce,
    block_threads,
    combine,
    identity_const,
    reduction_scratch,
)
from xlac.passes.gpu.gpu_kernel_text import (
    THREADS,
    Lines,
    Operand,
    call_body,
    carried_loop,
    delinearize,
    guarded,
    helper,
    launch_header,
    load,
    placeholder,
    store,
)
from xlac.passes.gpu.gpu_kernel_vector import access, lanes_of, vector_load, vector_store, vector_width


@dataclass(frozen=True)
class RowStage:
    """One op of the chain as the kernel sees it."""
    body: str                       # its region function's stem: @<body>_body
    inputs: tuple[int, ...]         # operand positions read (the chain's operand list)
    input_kinds: tuple[str, ...]    # "point", "row" or "other" per input
    output: int                     # the position written
    indices: tuple[tuple[str, ...], ...]   # each operand's index expressions (inputs, output)
    combiner: str = ""              # reductions: the op folding the row
    init: str = ""                  # reductions: a folded fill's constant, else the output's value
    store: bool = True              # whether memory after the chain may read what it writes


@dataclass(frozen=True)
class RowKernel:
    name: str
    operands: tuple[Operand, ...]   # every buffer the chain touches, once
    captures: tuple[str, ...]
    rows: tuple[int, ...]           # the parallel sizes
    row: int                        # the row's length
    stages: tuple[RowStage, ...]

    def types(self) -> list[str]:
        return [o.memref for o in self.operands] + list(self.captures)

    def capture_names(self) -> list[str]:
        return [f"%a{len(self.operands) + i}" for i in range(len(self.captures))]


SHARED_BYTES = 48 * 1024          # static shared memory a block may have
_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}


def fits(kernel: RowKernel) -> bool:
    """Whether the rows the kernel keeps, and the reductions' scratch, fit in shared memory."""
    slots = sum(kernel.row * _BYTES[element] for element in _slots(kernel).elements)
    return slots + (THREADS + 1) * 8 <= SHARED_BYTES


def row_kernel(kernel: RowKernel) -> str:
    slots = _slots(kernel)
    reduced = next(kernel.operands[s.output].element for s in kernel.stages if s.combiner)
    width = row_width(kernel)
    threads = block_threads(kernel.row // width)
    shared = [reduction_scratch(reduced, threads), f"%rowvalue : memref<1x{reduced}, #gpu.address_space<workgroup>>"]
    shared += [f"%slot{i} : memref<{kernel.row}x{element}, #gpu.address_space<workgroup>>"
               for i, element in enumerate(slots.elements)]
    lines = launch_header((math.prod(kernel.rows), 1, 1), (threads, 1, 1), shared)
    body = Lines()
    row_dims = delinearize(body, "%bx", list(kernel.rows)) if kernel.rows else []
    held: dict[int, tuple[str, str]] = {}        # operand -> ("row", value) or ("slot", slot name)
    for index, stage in enumerate(kernel.stages):
        if stage.combiner:
            _reduction(body, kernel, index, row_dims, held, slots, threads, reduced, width)
        else:
            _pointwise(body, kernel, index, row_dims, held, slots, threads, width)
    return helper(kernel.name, kernel.types(), lines + body.lines + ["gpu.terminator", "}"])


@dataclass(frozen=True)
class _Slots:
    elements: tuple[str, ...]                     # each slot's element type
    loads: dict[tuple[int, int], int]             # (stage, input position) -> slot it fills from global
    writes: dict[int, int]                        # stage -> slot its point output goes to


def _slots(kernel: RowKernel) -> _Slots:
    """Which point values stay in shared memory, and where: a global row read by two
    stages, a written point value read later; a slot is reused once its value is dead."""
    last_read: dict[tuple[int, int], int] = {}    # (operand, version) -> last stage reading it
    version = dict.fromkeys(range(len(kernel.operands)), 0)
    reads_at = []
    for index, stage in enumerate(kernel.stages):
        points = [(p, version[p]) for p, kind in zip(stage.inputs, stage.input_kinds) if kind == "point"]
        reads_at.append(points)
        for key in points:
            last_read[key] = index
        version[stage.output] += 1
    readers: dict[tuple[int, int], int] = {}
    for points in reads_at:
        for key in points:
            readers[key] = readers.get(key, 0) + 1
    elements, free, loads, writes, owner = [], [], {}, {}, {}
    version = dict.fromkeys(range(len(kernel.operands)), 0)

    def take(element: str, value: tuple[int, int]) -> int:
        for slot in free:
            if elements[slot] == element:
                free.remove(slot)
                owner[slot] = value
                return slot
        elements.append(element)
        owner[len(elements) - 1] = value
        return len(elements) - 1

    for index, stage in enumerate(kernel.stages):
        for p, kind in zip(stage.inputs, stage.input_kinds):
            key = (p, version[p])
            if kind == "point" and version[p] == 0 and readers[key] > 1 and key not in owner.values():
                loads[(index, p)] = take(kernel.operands[p].element, key)
        for slot, key in list(owner.items()):       # values read for the last time here
            if last_read.get(key, -1) <= index and slot not in free:
                free.append(slot)
        version[stage.output] += 1
        key = (stage.output, version[stage.output])
        if not stage.combiner and key in last_read:
            writes[index] = take(kernel.operands[stage.output].element, key)
    return _Slots(tuple(elements), loads, writes)


def _addressed(kernel: RowKernel, stage: RowStage, which: int) -> Operand:
    """Operand ``which`` of ``stage`` (its inputs, then its output) with the stage's indices."""
    position = stage.output if which == len(stage.inputs) else stage.inputs[which]
    return replace(kernel.operands[position], indices=stage.indices[which])


def _slot_type(kernel: RowKernel, slots: _Slots, slot: int) -> str:
    return f"memref<{kernel.row}x{slots.elements[slot]}, #gpu.address_space<workgroup>>"


def row_width(kernel: RowKernel) -> int:
    """Elements per thread and step: 16 bytes of the row where every point access to
    global memory is aligned for it (gpu_kernel_vector.py), else 1."""
    accessed = [_addressed(kernel, stage, which) for stage in kernel.stages
                for which, kind in enumerate([*stage.input_kinds, "point" if not stage.combiner else "row"])
                if kind == "point"]
    width = vector_width(accessed, len(kernel.rows), kernel.row)
    while width > 1 and not all(access(o, len(kernel.rows), width) for o in accessed):
        width //= 2
    return width


def _read(loop: Lines, kernel: RowKernel, index: int, which: int, dims: list[str], lanes: list[str],
          held, slots: _Slots, width: int) -> list[str]:
    """Input ``which`` of stage ``index`` at the row's points ``lanes`` (``dims``: the first's)."""
    stage = kernel.stages[index]
    position = stage.inputs[which]
    if position in held:
        how, where = held[position]
        if how == "row":
            return [where] * width
        return [loop.op(f"memref.load %slot{where}[{k}] : {_slot_type(kernel, slots, where)}") for k in lanes]
    operand = _addressed(kernel, stage, which)
    if width == 1:
        values = [load(loop, operand, dims)]
    elif stage.input_kinds[which] == "point" or access(operand, len(kernel.rows), width):
        values = lanes_of(loop, operand, vector_load(loop, operand, dims, width), width)   # a bias along the row too
    else:
        values = [load(loop, operand, dims[:-1] + [k]) for k in lanes]
    if (index, position) in slots.loads:
        slot = slots.loads[(index, position)]
        for value, k in zip(values, lanes):
            loop.add(f"memref.store {value}, %slot{slot}[{k}] : {_slot_type(kernel, slots, slot)}")
    return values


def _point(loop: Lines, row_dims: list[str], v: str, width: int) -> tuple[list[str], list[str]]:
    """The dims of step ``v``'s first point and the row index of each of its lanes."""
    first = v if width == 1 else loop.op(f"arith.muli {v}, {loop.const(width)} : index")
    lanes = [first] + [loop.op(f"arith.addi {first}, {loop.const(j)} : index") for j in range(1, width)]
    return list(row_dims) + [first], lanes


def _inputs(loop: Lines, kernel: RowKernel, index: int, dims, lanes, held, slots, width: int) -> list[list[str]]:
    """Each input's value per lane."""
    stage = kernel.stages[index]
    values = [_read(loop, kernel, index, which, dims, lanes, held, slots, width)
              for which in range(len(stage.inputs))]
    for p in stage.inputs:                          # later stages read the slot this one filled
        if (index, p) in slots.loads:
            held[p] = ("slot", slots.loads[(index, p)])
    return values


def _pointwise(body: Lines, kernel: RowKernel, index: int, row_dims, held, slots, threads: int,
               width: int) -> None:
    stage = kernel.stages[index]
    out = kernel.operands[stage.output]
    loop = body.nested()
    v = body.fresh("k")
    dims, lanes = _point(loop, row_dims, v, width)
    values = _inputs(loop, kernel, index, dims, lanes, held, slots, width)
    types = [kernel.operands[p].element for p in stage.inputs] + [out.element] + list(kernel.captures)
    results = []
    for j in range(width):
        args = [lane[j] for lane in values] + [placeholder(loop, out.element)] + kernel.capture_names()
        results += call_body(loop, stage.body, args, types, [out.element])
    if index in slots.writes:
        slot = slots.writes[index]
        for result, k in zip(results, lanes):
            loop.add(f"memref.store {result}, %slot{slot}[{k}] : {_slot_type(kernel, slots, slot)}")
    if stage.store:
        written = _addressed(kernel, stage, len(stage.inputs))
        if width == 1:
            store(loop, results[0], written, dims)
        else:
            vector_store(loop, results, written, dims, width)
    body.add(f"scf.for {v} = %tx to {body.const(kernel.row // width)} step {body.const(threads)} {{")
    body.lines += loop.lines
    body.add("}")
    if index in slots.writes:
        held[stage.output] = ("slot", slots.writes[index])
    else:
        held.pop(stage.output, None)


def _reduction(body: Lines, kernel: RowKernel, index: int, row_dims, held, slots, threads: int,
               element: str, width: int) -> None:
    stage = kernel.stages[index]
    out = kernel.operands[stage.output]
    types = [kernel.operands[p].element for p in stage.inputs] + [out.element] + list(kernel.captures)

    def step(loop: Lines, v: str, carried: list[str]) -> list[str]:
        dims, lanes = _point(loop, row_dims, v, width)
        values = _inputs(loop, kernel, index, dims, lanes, held, slots, width)
        for j in range(width):              # the lanes in order, as the reduction kernels fold them
            carried = call_body(loop, stage.body, [lane[j] for lane in values] + carried
                                + kernel.capture_names(), types, [out.element])
        return carried

    start = identity_const(body, stage.combiner, element)
    bounds = ("%tx", body.const(kernel.row // width), body.const(threads))
    (acc,) = carried_loop(body, bounds, [start], [element], step)
    total = block_reduce(body, acc, stage.combiner, element, threads)
    first = body.op(f"arith.cmpi eq, %tx, {body.const(0)} : index")
    write = body.nested()
    if stage.init:
        old = write.op(f"arith.constant {stage.init}")
    elif stage.output in held:
        old = held[stage.output][1]
    else:
        old = load(write, _addressed(kernel, stage, len(stage.inputs)), list(row_dims) + [write.const(0)])
    value = combine(write, stage.combiner, total, old, element)
    rowvalue = f"memref<1x{element}, #gpu.address_space<workgroup>>"
    write.add(f"memref.store {value}, %rowvalue[{write.const(0)}] : {rowvalue}")
    if stage.store:
        store(write, value, _addressed(kernel, stage, len(stage.inputs)), list(row_dims) + [write.const(0)])
    guarded(body, first, write)
    body.add("gpu.barrier")
    broadcast = body.op(f"memref.load %rowvalue[{body.const(0)}] : {rowvalue}")
    body.add("gpu.barrier")               # before the next reduction reuses the scratch
    held[stage.output] = ("row", broadcast)
