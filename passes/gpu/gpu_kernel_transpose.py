"""Transposing loop kernels through shared memory: 32x32 tiles, both sides coalesced.

A loop kernel puts the innermost loop dim on consecutive threads, so its stores
coalesce; an input whose innermost (unit-stride) dim is another loop dim, ``k``, is
then read with a stride of a whole row per thread: 32 transactions per warp instead
of one. Here a block of 32x8 threads stages a 32x32 tile of each such input in shared
memory: it reads the tile with ``k`` on threadIdx.x (coalesced), waits at a barrier,
then computes and writes the tile with the innermost dim on threadIdx.x, taking the
transposed values from the tile's columns. The tile has 33 columns, so a warp reading
a column touches 32 different banks. Each thread handles 4 points of each tile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlac.passes.gpu.gpu_kernel_text import (
    Lines,
    Operand,
    call_body,
    delinearize,
    guarded,
    helper,
    launch_header,
    load,
    store,
)

TILE = 32
ROWS = 8                           # threads along y: each thread handles TILE / ROWS points
TRANSPOSABLE = {"i1", "i8", "i16", "f16", "bf16", "i32", "f32", "i64", "f64"}


@dataclass(frozen=True)
class TransposePlan:
    across: int                    # the loop dim the transposed inputs are contiguous along
    staged: tuple[int, ...]        # positions of the inputs read through shared memory


def transpose_plan(op) -> TransposePlan | None:
    """The plan when some input is contiguous along another loop dim than the outputs
    (which are all contiguous along the innermost), else None."""
    space = op.space
    if len(space.sizes) < 2 or any(space.reduction):
        return None
    inner = len(space.sizes) - 1
    if not all(_contiguous_along(o) == inner for o in op.outputs):
        return None
    across = {_contiguous_along(o) for o in op.operands[:op.inputs]} - {None, inner}
    if len(across) != 1:
        return None
    (k,) = across
    if space.sizes[k] < 2 or space.sizes[inner] < 2:
        return None                          # a dim of 1: every access is contiguous already
    staged = tuple(o.position for o in op.operands[:op.inputs] if _contiguous_along(o) == k)
    if any(op.operands[p].element not in TRANSPOSABLE for p in staged):
        return None
    return TransposePlan(k, staged)


def _contiguous_along(operand: Operand) -> int | None:
    """The loop dim a unit-stride innermost index is exactly, else None."""
    if not operand.memref.startswith("memref<") or operand.layout is None or not operand.indices:
        return None
    last = operand.indices[-1]
    if operand.layout[1][-1] != 1 or not (last.startswith("d") and last[1:].isdigit()):
        return None
    return int(last[1:])


def transpose_kernel(op, plan: TransposePlan) -> str:
    sizes = op.space.sizes
    inner, k = len(sizes) - 1, plan.across
    others = [d for d in range(len(sizes)) if d not in (k, inner)]
    tiles_k, tiles_inner = -(-sizes[k] // TILE), -(-sizes[inner] // TILE)
    blocks = math.prod(sizes[d] for d in others) * tiles_k * tiles_inner
    tiles = {p: f"%tile{p}" for p in plan.staged}
    workgroup = [f"{name} : {_tile_type(op.operands[p])}" for p, name in tiles.items()]
    lines = launch_header((blocks, 1, 1), (TILE, ROWS, 1), workgroup)
    body = Lines()
    block = delinearize(body, "%bx", [sizes[d] for d in others] + [tiles_k, tiles_inner])
    fixed = dict(zip(others, block))
    k0 = body.op(f"arith.muli {block[-2]}, {body.const(TILE)} : index")
    inner0 = body.op(f"arith.muli {block[-1]}, {body.const(TILE)} : index")
    for row in range(0, TILE, ROWS):         # read: k on threadIdx.x
        _tile_point(body, op, fixed, (k, k0, "%tx"), (inner, inner0, "%ty"), row,
                    lambda at, dims, row=row: _stage(at, op, plan, tiles, dims, row))
    body.add("gpu.barrier")
    for row in range(0, TILE, ROWS):         # compute and write: the innermost dim on threadIdx.x
        _tile_point(body, op, fixed, (inner, inner0, "%tx"), (k, k0, "%ty"), row,
                    lambda at, dims, row=row: _compute(at, op, plan, tiles, dims, row))
    return helper(op.name, op.helper_types(), lines + body.lines + ["gpu.terminator", "}"])


def _tile_type(operand: Operand) -> str:
    return f"memref<{TILE}x{TILE + 1}x{operand.element}, #gpu.address_space<workgroup>>"


def _tile_point(body: Lines, op, fixed: dict, along_x, along_y, row: int, emit) -> None:
    """The point (x dim at start + threadIdx.x, y dim at start + threadIdx.y + row), guarded."""
    sizes = op.space.sizes
    dims = dict(fixed)
    (x_dim, x0, x), (y_dim, y0, y) = along_x, along_y
    dims[x_dim] = body.op(f"arith.addi {x0}, {x} : index")
    dims[y_dim] = body.op(f"arith.addi {y0}, {body.op(f'arith.addi {y}, {body.const(row)} : index')} : index")
    inside_x = body.op(f"arith.cmpi ult, {dims[x_dim]}, {body.const(sizes[x_dim])} : index")
    inside_y = body.op(f"arith.cmpi ult, {dims[y_dim]}, {body.const(sizes[y_dim])} : index")
    inside = body.op(f"arith.andi {inside_x}, {inside_y} : i1")
    at = body.nested()
    emit(at, [dims[d] for d in range(len(sizes))])
    guarded(body, inside, at)


def _stage(body: Lines, op, plan, tiles, dims, row: int) -> None:
    """tile[ty + row][tx] = input at the point (tx runs along its contiguous dim)."""
    y = body.op(f"arith.addi %ty, {body.const(row)} : index")
    for p in plan.staged:
        operand = op.operands[p]
        body.add(f"memref.store {load(body, operand, dims)}, {tiles[p]}[{y}, %tx] : "
                 f"{_tile_type(operand)}")


def _compute(body: Lines, op, plan, tiles, dims, row: int) -> None:
    """The region at the point; a staged input is tile[tx][ty + row]."""
    y = body.op(f"arith.addi %ty, {body.const(row)} : index")
    values = []
    for operand in op.operands:
        if operand.position in tiles:
            values.append(body.op(f"memref.load {tiles[operand.position]}[%tx, {y}] : "
                                  f"{_tile_type(operand)}"))
        else:
            values.append(load(body, operand, dims))
    results = call_body(body, op.name, values + op.capture_names(), op.body_types(),
                        op.result_types())
    for value, operand in zip(results, op.outputs):
        store(body, value, operand, dims)
