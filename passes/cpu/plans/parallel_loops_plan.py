"""Loops no vector schedule takes, split among the threads: the plan for
passes/cpu/schedules/parallel_loops.mlir (read by xla-apply-schedules)."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.cpu.plans.chunks import thread_tiles
from xlac.passes.cpu.plans.schedule_plan import MIN_WORK, Machine, Plan, iterator_kinds, loop_extents

PARALLEL_LOOPS = "xla_parallel_loops"
# A scalar iteration costs what a vector's lanes do, so chunks of scalar loops
# pay for the threads' fork-join at a sixteenth of CHUNK_WORK's iterations.
SCALAR_ITERATION_WORK = 16
_MAX_PARALLEL_RANK = 8          # passes/cpu/schedules/parallel_loops.mlir's sequences


def parallel_loops_plan(op: ir.Operation, machine: Machine) -> Plan | None:
    """Chunks of the outer parallel loops for the threads, the loops inside
    left scalar: for a generic no vector schedule takes (control flow in the
    body, i1 or f64 accumulators, strided windows). None when it is too
    small to split or its loop extents are not all static."""
    extents = loop_extents(op)
    if extents is None or not 1 <= len(extents) <= _MAX_PARALLEL_RANK:
        return None
    kinds = iterator_kinds(op, len(extents))
    parallel = [i for i, kind in enumerate(kinds) if kind == "parallel"]
    inner_work = math.prod(e for i, e in enumerate(extents) if i not in parallel)
    if not parallel or math.prod(extents) < MIN_WORK:
        return None
    chunks = thread_tiles(tuple(extents[i] for i in parallel), machine.threads, 1,
                          inner_work * SCALAR_ITERATION_WORK)
    if chunks == tuple(extents[i] for i in parallel):
        return None                      # one chunk: nothing to split
    sizes = [0] * len(extents)
    for dim, size in zip(parallel, chunks):
        sizes[dim] = size
    return Plan(f"{PARALLEL_LOOPS}_{len(extents)}d", tuple(sizes))
