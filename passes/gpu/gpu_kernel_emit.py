"""The three kernel shapes of ``xla-gpu-kernels`` (see gpu_kernel_text.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlac.passes.gpu.gpu_kernel_text import (
    THREADS,
    WARP,
    Lines,
    Operand,
    Space,
    call_body,
    carried_loop,
    delinearize,
    global_thread,
    guarded,
    helper,
    interleave,
    launch_header,
    load,
    placeholder,
    store,
)
from xlac.passes.gpu.gpu_kernel_transpose import transpose_kernel, transpose_plan
from xlac.passes.gpu.gpu_kernel_vector import (
    VectorPlan,
    reduction_vector_plan,
    vector_fold_step,
    vector_loop_kernel,
    vector_plan,
)

# A reduction's identity per combining op and element type: each thread starts from it.
_FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
_INF = {"f16": "0x7C00", "bf16": "0x7F80", "f32": "0x7F800000", "f64": "0x7FF0000000000000"}
_NEG_INF = {"f16": "0xFC00", "bf16": "0xFF80", "f32": "0xFF800000", "f64": "0xFFF0000000000000"}
_NAN = {"f16": "0x7E00", "bf16": "0x7FC0", "f32": "0x7FC00000", "f64": "0x7FF8000000000000"}
SPLIT_TARGET_BLOCKS = 528            # 4 blocks per SM of an H100/H200 (132 SMs)


def identity(combiner: str, element: str) -> str | None:
    """The combining op's identity as an arith.constant value, None if it has none here."""
    if element in _FLOAT_BITS:
        return {"arith.addf": "-0.000000e+00", "arith.mulf": "1.000000e+00",
                "arith.maximumf": _NEG_INF[element], "arith.minimumf": _INF[element],
                "arith.maxnumf": _NAN[element], "arith.minnumf": _NAN[element]}.get(combiner)
    if not element.startswith("i"):
        return None
    bits = int(element[1:])
    if bits == 1:                   # as integers: `arith.constant false : i1` does not parse
        return {"arith.andi": "1", "arith.ori": "0", "arith.xori": "0",
                "arith.addi": "0"}.get(combiner)
    return {"arith.addi": "0", "arith.ori": "0", "arith.xori": "0", "arith.maxui": "0",
            "arith.muli": "1", "arith.andi": "-1", "arith.minui": "-1",
            "arith.maxsi": str(-2 ** (bits - 1)), "arith.minsi": str(2 ** (bits - 1) - 1)}.get(combiner)


@dataclass(frozen=True)
class KernelOp:
    """A linalg op as the emitters see it."""
    name: str                       # the helper's symbol
    operands: tuple[Operand, ...]   # inputs, then outputs
    inputs: int
    space: Space
    captures: tuple[str, ...]       # types of outside values the region uses
    combiner: str = ""              # reductions: the op folding into the output
    init: tuple[str, ...] = ()      # reductions: each output's start value when a fill was folded
                                    # in (an arith.constant attribute's text), else read from it
    pointwise: tuple[int, ...] = ()  # block reductions: outputs stored at every point (a
                                     # multi-output fusion's elementwise result, multi_output.py)

    @property
    def outputs(self) -> tuple[Operand, ...]:
        return self.operands[self.inputs:]

    @property
    def reduced(self) -> Operand:
        """The output a reduction folds into (the one not stored per point)."""
        return next(o for k, o in enumerate(self.outputs) if k not in self.pointwise)

    def helper_types(self) -> list[str]:
        return [o.memref for o in self.operands] + list(self.captures)

    def capture_names(self) -> list[str]:
        return [f"%a{len(self.operands) + i}" for i in range(len(self.captures))]

    def body_types(self) -> list[str]:
        return [o.element for o in self.operands] + list(self.captures)

    def result_types(self) -> list[str]:
        return [o.element for o in self.outputs]


def loop_kernel(op: KernelOp) -> str:
    """One thread per iteration point; reductions (if any) run sequentially in the thread.
    Without reductions, 16 bytes per thread where the layouts allow (gpu_kernel_vector.py),
    or through shared-memory tiles where an input is transposed (gpu_kernel_transpose.py)."""
    plan = vector_plan(op)
    if plan is not None:
        return vector_loop_kernel(op, plan)
    tiles = transpose_plan(op)
    if tiles is not None:
        return transpose_kernel(op, tiles)
    parallel = op.space.parallel_sizes
    count = math.prod(parallel)
    lines = launch_header((max(1, -(-count // THREADS)), 1, 1), (THREADS, 1, 1))
    body = Lines()
    point = global_thread(body)
    live = body.op(f"arith.cmpi ult, {point}, {body.const(count)} : index")
    inner = body.nested()
    parallel_dims = delinearize(inner, point, parallel) if parallel else []
    if op.space.reduction_sizes:
        _sequential_reduction(inner, op, parallel_dims)
    else:
        dims = interleave(op.space, parallel_dims, [])
        values = [load(inner, operand, dims) for operand in op.operands]
        results = call_body(inner, op.name, values + op.capture_names(), op.body_types(),
                            op.result_types())
        for value, operand in zip(results, op.outputs):
            store(inner, value, operand, dims)
    guarded(body, live, inner)
    return helper(op.name, op.helper_types(), lines + body.lines + ["gpu.terminator", "}"])


def _sequential_reduction(body: Lines, op: KernelOp, parallel_dims: list[str]) -> None:
    """Fold the reduced points in order into registers started from the outputs."""
    zero = [body.const(0) for _ in op.space.reduction_sizes]
    first = interleave(op.space, parallel_dims, zero)
    starts = start_values(body, op, first)
    total = math.prod(op.space.reduction_sizes)

    bounds = (body.const(0), body.const(total), body.const(1))
    folded = carried_loop(body, bounds, starts, op.result_types(), _fold_step(op, parallel_dims))
    for value, operand in zip(folded, op.outputs):
        store(body, value, operand, first)


def reduction_split(op: KernelOp) -> int:
    """How many blocks fold each output (1: one block per output element)."""
    outputs = math.prod(op.space.parallel_sizes)
    reduced = math.prod(op.space.reduction_sizes)
    if outputs >= SPLIT_TARGET_BLOCKS:
        return 1
    return max(1, min(-(-SPLIT_TARGET_BLOCKS // outputs), reduced // (THREADS * 8)))


def reduction_kernels(op: KernelOp) -> str:
    """Block-per-output tree reduction; with a split, partial results then a second launch."""
    out = op.reduced
    split = reduction_split(op)
    outputs = math.prod(op.space.parallel_sizes)
    if split == 1:
        lines = _fold_launch(op, 1, None)
    else:
        partial = Operand(len(op.operands) + len(op.captures), f"memref<{outputs}x{split}x{out.element}>",
                          out.element, ("d0", "d1"))
        lines = [f"%a{partial.position} = memref.alloc() : {partial.memref}"]
        lines += _fold_launch(op, split, partial)
        lines += _combine_partials_launch(op, split, partial)
    return helper(op.name, op.helper_types(), lines)


def _fold_launch(op: KernelOp, split: int, partial: Operand | None) -> list[str]:
    """Block b folds output b // split, reduced points (b % split) * T + t, step split * T."""
    out = op.reduced
    plan = reduction_vector_plan(op)        # each step a 16-byte vector of the row: fewer, wider loads
    reduced = math.prod(op.space.reduction_sizes) // (plan.width if plan else 1)
    threads = block_threads(reduced)
    outputs = math.prod(op.space.parallel_sizes)
    workgroup = reduction_scratch(out.element, threads)
    lines = launch_header((outputs * split, 1, 1), (threads, 1, 1), [workgroup])
    body = Lines()
    split_k = body.const(split)
    output = body.op(f"arith.divui %bx, {split_k} : index")
    part = body.op(f"arith.remui %bx, {split_k} : index")
    parallel_dims = delinearize(body, output, op.space.parallel_sizes) if op.space.parallel_sizes else []
    start = body.op(f"arith.addi {body.op(f'arith.muli {part}, {body.const(threads)} : index')}, "
                    "%tx : index")
    acc = _strided_fold(body, op, parallel_dims, start, reduced, split * threads, plan)
    total = block_reduce(body, acc, op.combiner, out.element, threads)
    first = body.op("arith.cmpi eq, %tx, " + body.const(0) + " : index")
    write = body.nested()
    if partial is None:
        _combine_into_output(write, op, total, parallel_dims)
    else:
        write.add(f"memref.store {total}, %a{partial.position}[{output}, {part}] : {partial.memref}")
    guarded(body, first, write)
    return lines + body.lines + ["gpu.terminator", "}"]


def _combine_partials_launch(op: KernelOp, split: int, partial: Operand) -> list[str]:
    out = op.reduced
    threads = block_threads(split)
    lines = launch_header((math.prod(op.space.parallel_sizes), 1, 1), (threads, 1, 1),
                          [reduction_scratch(out.element, threads)], tag="combine")
    body = Lines()
    parallel_dims = (delinearize(body, "%bx", op.space.parallel_sizes)
                     if op.space.parallel_sizes else [])
    start = identity_const(body, op.combiner, out.element)

    def step(loop, k, carried):
        value = loop.op(f"memref.load %a{partial.position}[%bx, {k}] : {partial.memref}")
        return [combine(loop, op.combiner, carried[0], value, out.element)]

    bounds = ("%tx", body.const(split), body.const(threads))
    (result,) = carried_loop(body, bounds, [start], [out.element], step)
    total = block_reduce(body, result, op.combiner, out.element, threads)
    first = body.op("arith.cmpi eq, %tx, " + body.const(0) + " : index")
    write = body.nested()
    _combine_into_output(write, op, total, parallel_dims)
    guarded(body, first, write)
    return lines + body.lines + ["gpu.terminator", "}"]


def _strided_fold(body: Lines, op: KernelOp, parallel_dims: list[str], start: str,
                  reduced: int, stride: int, plan: VectorPlan | None = None) -> str:
    """Fold points start, start + stride, ... < reduced (vector points with a plan) into a
    register started at the identity."""
    out = op.reduced
    init = identity_const(body, op.combiner, out.element)
    step = _fold_step(op, parallel_dims) if plan is None else vector_fold_step(op, parallel_dims, plan)
    bounds = (start, body.const(reduced), body.const(stride))
    return carried_loop(body, bounds, [init], [out.element], step)[0]


def _fold_step(op: KernelOp, parallel_dims: list[str]):
    """A loop step folding reduced point k into the carried values through the op's
    region; the pointwise outputs' values are stored at k."""
    def step(loop: Lines, k: str, carried: list[str]) -> list[str]:
        dims = interleave(op.space, parallel_dims, delinearize(loop, k, op.space.reduction_sizes))
        values = [load(loop, operand, dims) for operand in op.operands[:op.inputs]]
        folded = iter(carried)
        outs = [placeholder(loop, o.element) if j in op.pointwise else next(folded)
                for j, o in enumerate(op.outputs)]
        results = call_body(loop, op.name, values + outs + op.capture_names(), op.body_types(),
                            op.result_types())
        for j in op.pointwise:
            store(loop, results[j], op.outputs[j], dims)
        return [r for j, r in enumerate(results) if j not in op.pointwise]
    return step


def _combine_into_output(body: Lines, op: KernelOp, total: str, parallel_dims: list[str]) -> None:
    out = op.reduced
    zero = [body.const(0) for _ in op.space.reduction_sizes]
    dims = interleave(op.space, parallel_dims, zero)
    (old,) = start_values(body, op, dims, [out])
    store(body, combine(body, op.combiner, total, old, out.element), out, dims)


def start_values(body: Lines, op: KernelOp, dims: list[str], outputs=None) -> list[str]:
    """The outputs' values before the reduction: the folded fill's constants, or loaded."""
    if op.init:
        return [body.op(f"arith.constant {value}") for value in op.init]
    return [load(body, operand, dims) for operand in (op.outputs if outputs is None else outputs)]


def block_threads(work: int) -> int:
    """A power of two from one warp to THREADS, no more than the work needs."""
    threads = WARP
    while threads < THREADS and threads < work:
        threads *= 2
    return threads


def reduction_scratch(element: str, threads: int) -> str:
    slots = threads // WARP if _shuffles(element) else threads
    return f"%shared : memref<{slots}x{element}, #gpu.address_space<workgroup>>"


def _shuffles(element: str) -> bool:
    return element in ("f32", "i32")           # gpu.shuffle's NVVM lowering takes 32-bit values


def identity_const(body: Lines, combiner: str, element: str) -> str:
    return body.const(identity(combiner, element), element)


def combine(body: Lines, combiner: str, a: str, b: str, element: str) -> str:
    return body.op(f"{combiner} {a}, {b} : {element}")


def block_reduce(body: Lines, value: str, combiner: str, element: str, threads: int) -> str:
    """All ``threads`` of the block fold ``value``; the result is valid in thread 0."""
    if not _shuffles(element):
        return _shared_tree(body, value, combiner, element, threads)
    value = _warp_reduce(body, value, combiner, element)
    if threads == WARP:
        return value
    warps, warp_size = threads // WARP, body.const(WARP)
    lane = body.op(f"arith.remui %tx, {warp_size} : index")
    warp = body.op(f"arith.divui %tx, {warp_size} : index")
    lane0 = body.op(f"arith.cmpi eq, {lane}, {body.const(0)} : index")
    write = body.nested()
    write.add(f"memref.store {value}, %shared[{warp}] : memref<{warps}x{element}, #gpu.address_space<workgroup>>")
    guarded(body, lane0, write)
    body.add("gpu.barrier")
    has = body.op(f"arith.cmpi ult, {lane}, {body.const(warps)} : index")
    gathered = body.fresh("g")
    body.add(f"{gathered} = scf.if {has} -> ({element}) {{")
    then = body.nested()
    loaded = then.op(f"memref.load %shared[{lane}] : memref<{warps}x{element}, #gpu.address_space<workgroup>>")
    then.add(f"scf.yield {loaded} : {element}")
    body.lines += then.lines
    body.add("} else {")
    other = body.nested()
    other.add(f"scf.yield {identity_const(other, combiner, element)} : {element}")
    body.lines += other.lines
    body.add("}")
    return _warp_reduce(body, gathered, combiner, element)


def _warp_reduce(body: Lines, value: str, combiner: str, element: str) -> str:
    width = body.const(WARP, "i32")
    offset = WARP // 2
    while offset:
        shifted, valid = body.fresh("sh"), body.fresh("ok")
        body.add(f"{shifted}, {valid} = gpu.shuffle xor {value}, {body.const(offset, 'i32')}, "
                 f"{width} : {element}")
        value = combine(body, combiner, value, shifted, element)
        offset //= 2
    return value


def _shared_tree(body: Lines, value: str, combiner: str, element: str, threads: int) -> str:
    """Pairwise folding through shared memory, for types gpu.shuffle does not take."""
    memref = f"memref<{threads}x{element}, #gpu.address_space<workgroup>>"
    body.add(f"memref.store {value}, %shared[%tx] : {memref}")
    body.add("gpu.barrier")
    half = threads // 2
    while half:
        active = body.op(f"arith.cmpi ult, %tx, {body.const(half)} : index")
        step = body.nested()
        partner = step.op(f"arith.addi %tx, {step.const(half)} : index")
        mine = step.op(f"memref.load %shared[%tx] : {memref}")
        theirs = step.op(f"memref.load %shared[{partner}] : {memref}")
        step.add(f"memref.store {combine(step, combiner, mine, theirs, element)}, %shared[%tx] : {memref}")
        guarded(body, active, step)
        body.add("gpu.barrier")
        half //= 2
    return body.op(f"memref.load %shared[{body.const(0)}] : {memref}")
