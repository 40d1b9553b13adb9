"""Column reductions: a thread per (16 bytes of) output columns, the rows split over threads.

A reduction whose inputs are contiguous along a parallel dim (``sum(x, axis=0)``) read
by a block per output has each warp load 32 rows of one column: 32 transactions a
load. Here consecutive threads take consecutive outputs, so every load a warp issues
is one contiguous stretch of a row (``ld.global.v4`` where the layouts allow: 4 f32
columns a thread), and the rows are split over ``split`` groups of threads so the GPU
has ~270,000 threads (132 SMs x 2,048) to hide latency with: 8,192 columns would be
2,048 threads alone. Each group writes its partial results to a [split x outputs]
buffer, and a second launch folds them per output (a thread each, coalesced too).
With enough columns (split 1) the first launch writes the outputs itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlac.passes.gpu.gpu_kernel_emit import KernelOp, combine, identity_const, start_values
from xlac.passes.gpu.gpu_kernel_text import (
    THREADS,
    Lines,
    Operand,
    call_body,
    carried_loop,
    delinearize,
    global_thread,
    guarded,
    helper,
    interleave,
    launch_header,
    load,
    store,
)
from xlac.passes.gpu.gpu_kernel_vector import (
    SMS,
    access,
    lanes_of,
    mentions,
    vector_load,
    vector_store,
    vector_width,
)

TARGET_THREADS = SMS * 2048      # every SM's resident threads
MIN_COLUMNS = 1024               # fewer outputs: a block each folds faster than a thread each
MIN_ROWS_PER_THREAD = 16


@dataclass(frozen=True)
class ColumnPlan:
    column: int                  # the loop dim consecutive threads take (the last parallel one)
    width: int                   # outputs per thread
    vectored: tuple[bool, ...]   # per input: vector loads (else one scalar, broadcast)
    split: int                   # thread groups the reduced points are split over


def column_plan(op: KernelOp) -> ColumnPlan | None:
    space = op.space
    if not op.combiner or op.pointwise or not any(space.reduction) or all(space.reduction):
        return None
    column = max(d for d, r in enumerate(space.reduction) if not r)
    outputs, reduced = math.prod(space.parallel_sizes), math.prod(space.reduction_sizes)
    inputs = [o for o in op.operands[:op.inputs] if o.memref.startswith("memref<")]
    if outputs < MIN_COLUMNS or not any(_along(o, column) for o in inputs) \
            or not all(_along(o, column) or not _mentions(o, column) for o in inputs):
        return None
    width = vector_width(inputs + [op.reduced], column, space.sizes[column])
    vectored = tuple(access(o, column, width) for o in op.operands[:op.inputs])
    if width < 2 or None in vectored:
        width, vectored = 1, tuple(False for _ in vectored)
    lanes = outputs // width
    split = max(1, min(-(-TARGET_THREADS // lanes), reduced // MIN_ROWS_PER_THREAD))
    return ColumnPlan(column, width, vectored, split)


def _mentions(operand: Operand, dim: int) -> bool:
    return any(mentions(e, dim) for e in operand.indices)


def _along(operand: Operand, dim: int) -> bool:
    """Unit-stride along ``dim`` as its innermost index: consecutive threads, consecutive addresses."""
    return (operand.layout is not None and bool(operand.indices)
            and operand.indices[-1] == f"d{dim}" and operand.layout[1][-1] == 1)


def column_kernels(op: KernelOp, plan: ColumnPlan) -> str:
    out = op.reduced
    outputs = math.prod(op.space.parallel_sizes)
    if plan.split == 1:
        return helper(op.name, op.helper_types(), _fold_launch(op, plan, None))
    partial = Operand(len(op.operands) + len(op.captures), f"memref<{plan.split}x{outputs}x{out.element}>",
                      out.element, ("d0", "d1"), (0, (outputs, 1)))
    lines = [f"%a{partial.position} = memref.alloc() : {partial.memref}"]
    lines += _fold_launch(op, plan, partial) + _combine_launch(op, plan, partial)
    return helper(op.name, op.helper_types(), lines)


def _parallel_sizes(op: KernelOp, plan: ColumnPlan) -> list[int]:
    """The parallel dims' sizes with the column dim counted in groups of ``width``."""
    return [n // plan.width if d == plan.column else n
            for d, n in enumerate(op.space.sizes) if not op.space.reduction[d]]


def _fold_launch(op: KernelOp, plan: ColumnPlan, partial: Operand | None) -> list[str]:
    """Thread t: output group t % lanes, reduced points t // lanes, + split, ..."""
    out, width = op.reduced, plan.width
    sizes = _parallel_sizes(op, plan)
    lanes = math.prod(sizes)
    threads = lanes * plan.split
    lines = launch_header((-(-threads // THREADS), 1, 1), (THREADS, 1, 1))
    body = Lines()
    thread = global_thread(body)
    live = body.op(f"arith.cmpi ult, {thread}, {body.const(threads)} : index")
    inner = body.nested()
    group = inner.op(f"arith.remui {thread}, {inner.const(lanes)} : index")
    part = inner.op(f"arith.divui {thread}, {inner.const(lanes)} : index")
    parallel = delinearize(inner, group, sizes)
    column = [d for d, r in enumerate(op.space.reduction) if not r].index(plan.column)
    parallel[column] = inner.op(f"arith.muli {parallel[column]}, {inner.const(width)} : index")
    starts = [identity_const(inner, op.combiner, out.element)] * width
    bounds = (part, inner.const(math.prod(op.space.reduction_sizes)), inner.const(plan.split))
    folded = carried_loop(inner, bounds, starts, [out.element] * width, _fold_step(op, plan, parallel))
    if partial is None:
        _write_outputs(inner, op, plan, parallel, folded)
    else:
        at = inner.op(f"arith.muli {group}, {inner.const(width)} : index")
        dims = [part, at]
        if width > 1:
            vector_store(inner, folded, partial, dims, width)
        else:
            store(inner, folded[0], partial, dims)
    guarded(body, live, inner)
    return lines + body.lines + ["gpu.terminator", "}"]


def _fold_step(op: KernelOp, plan: ColumnPlan, parallel: list[str]):
    """Fold reduced point k into each lane's register through the op's region."""
    width = plan.width

    def step(loop: Lines, k: str, carried: list[str]) -> list[str]:
        dims = interleave(op.space, parallel, delinearize(loop, k, op.space.reduction_sizes))
        values = [lanes_of(loop, o, vector_load(loop, o, dims, width), width) if vectored
                  else [load(loop, o, dims)] * width
                  for o, vectored in zip(op.operands[:op.inputs], plan.vectored)]
        results = []
        for j in range(width):
            args = [v[j] for v in values] + [carried[j]] + op.capture_names()
            (result,) = call_body(loop, op.name, args, op.body_types(), op.result_types())
            results.append(result)
        return results
    return step


def _lane_dims(body: Lines, op: KernelOp, plan: ColumnPlan, parallel: list[str], lane: int) -> list[str]:
    column = [d for d, r in enumerate(op.space.reduction) if not r].index(plan.column)
    dims = list(parallel)
    if lane:
        dims[column] = body.op(f"arith.addi {dims[column]}, {body.const(lane)} : index")
    zero = [body.const(0) for _ in op.space.reduction_sizes]
    return interleave(op.space, dims, zero)


def _write_outputs(body: Lines, op: KernelOp, plan: ColumnPlan, parallel: list[str],
                   totals: list[str]) -> None:
    """Each lane's total combined with the output's start value (the folded fill's, or read)."""
    out = op.reduced
    for lane, total in enumerate(totals):
        dims = _lane_dims(body, op, plan, parallel, lane)
        (old,) = start_values(body, op, dims, [out])
        store(body, combine(body, op.combiner, total, old, out.element), out, dims)


def _combine_launch(op: KernelOp, plan: ColumnPlan, partial: Operand) -> list[str]:
    """A thread per output folds its ``split`` partial results (a column of the buffer)."""
    out = op.reduced
    outputs = math.prod(op.space.parallel_sizes)
    lines = launch_header((-(-outputs // THREADS), 1, 1), (THREADS, 1, 1), tag="combine")
    body = Lines()
    thread = global_thread(body)
    live = body.op(f"arith.cmpi ult, {thread}, {body.const(outputs)} : index")
    inner = body.nested()

    def step(loop, k, carried):
        value = loop.op(f"memref.load %a{partial.position}[{k}, {thread}] : {partial.memref}")
        return [combine(loop, op.combiner, carried[0], value, out.element)]

    bounds = (inner.const(0), inner.const(plan.split), inner.const(1))
    start = identity_const(inner, op.combiner, out.element)
    (total,) = carried_loop(inner, bounds, [start], [out.element], step)
    parallel = delinearize(inner, thread, op.space.parallel_sizes)
    dims = interleave(op.space, parallel, [inner.const(0) for _ in op.space.reduction_sizes])
    (old,) = start_values(inner, op, dims, [out])
    store(inner, combine(inner, op.combiner, total, old, out.element), out, dims)
    guarded(body, live, inner)
    return lines + body.lines + ["gpu.terminator", "}"]
