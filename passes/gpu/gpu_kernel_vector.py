"""Loop kernels with 128-bit accesses: each thread moves 16 bytes of the innermost dim.

A memory-bound loop kernel reaches HBM bandwidth on Hopper only with wide accesses: one
scalar load per thread issues a 4-byte (or 2-, 1-byte) transaction per lane, and the
load/store units, not DRAM, become the limit. Here each thread reads every operand
indexed by the innermost loop dim as one ``vector.load`` (``ld.global.v4.f32``, or
``.v2.f64``, ``.v4.b32`` for 8 bf16 ...) and writes its outputs the same way; an
operand constant along that dim (a broadcast bias's row, a 0-d scalar) is one scalar
load shared by the lanes. The region still runs once per element, on the lanes
extracted from the vectors.

A vector access needs 16-byte alignment (``alignment`` on the op: NVPTX splits a
vector access it cannot prove aligned into scalar ones): every device buffer starts
256-byte aligned (the pool, cuMemAlloc, foreign arrays are copied when they are not:
device_array.py), so the access is aligned when the view's offset and outer strides
are multiples of the width and the innermost stride is 1. Anything else (a dynamic or
odd offset, an innermost extent the width does not divide, i1 and complex elements,
a transpose: the innermost dim in another position) keeps the scalar kernel.

Grid: one vector per thread, ``vectors / 256`` blocks of 256 threads, no grid-stride loop:
each block moves 4 kB a side, so 256 MiB is 65,536 blocks, not millions, and a kernel
without loops stays one whose donated input may be written in place (targets/cuda/
in_place.py reads a loop as "not pointwise"); docs/cuda.md, "Kernels".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from xlac.passes.gpu.gpu_kernel_text import (
    THREADS,
    Lines,
    Operand,
    call_body,
    delinearize,
    global_thread,
    guarded,
    helper,
    interleave,
    launch_header,
    load,
    operand_indices,
    placeholder,
)

VECTOR_BYTES = 16                 # the widest global access (ld.global.v4.b32)
SMS = 132                         # H100 SXM / H200
ELEMENT_BYTES = {"i8": 1, "i16": 2, "f16": 2, "bf16": 2, "i32": 4, "f32": 4, "i64": 8, "f64": 8}


@dataclass(frozen=True)
class VectorPlan:
    width: int                    # elements per thread along the innermost dim
    vectored: tuple[bool, ...]    # per operand: a vector access (else one scalar, broadcast)


def mentions(expr: str, dim: int) -> bool:
    return re.search(rf"\bd{dim}\b", expr) is not None


def aligned(operand: Operand, width: int) -> bool:
    """Vector accesses of ``width`` elements at multiples of ``width`` along the
    innermost dim stay aligned: unit innermost stride, offset and outer strides multiples."""
    offset, strides = operand.layout
    return strides[-1] == 1 and offset % width == 0 and all(s % width == 0 for s in strides[:-1])


def vector_width(operands, inner_dim: int, inner_size: int) -> int:
    """The elements per 16-byte access of the widest element, halved until it divides
    the innermost extent; 1 where some memref's element cannot be a vector lane."""
    memrefs = [o for o in operands if o.memref.startswith("memref<")]
    if not memrefs or any(o.element not in ELEMENT_BYTES or o.layout is None for o in memrefs):
        return 1
    width = VECTOR_BYTES // max(ELEMENT_BYTES[o.element] for o in memrefs)
    while width > 1 and inner_size % width:
        width //= 2
    return width


def access(operand: Operand, inner_dim: int, width: int) -> bool | None:
    """True: a vector access; False: constant along the innermost dim (one scalar);
    None: neither (the innermost dim elsewhere, a stride or offset that breaks alignment)."""
    if not operand.memref.startswith("memref<"):
        return False
    uses = [k for k, e in enumerate(operand.indices) if mentions(e, inner_dim)]
    if not uses:
        return False
    if uses == [len(operand.indices) - 1] and operand.indices[-1] == f"d{inner_dim}" \
            and aligned(operand, width):
        return True
    return None


def vector_plan(op) -> VectorPlan | None:
    """How a loop kernel without reductions reads and writes with vectors, or None."""
    space = op.space
    if not space.sizes or any(space.reduction):
        return None
    inner = len(space.sizes) - 1
    width = vector_width(op.operands, inner, space.sizes[-1])
    if width < 2:
        return None
    vectored = tuple(access(o, inner, width) for o in op.operands)
    if None in vectored or not all(vectored[op.inputs:]):
        return None
    return VectorPlan(width, vectored)


def vector_type(operand: Operand, width: int) -> str:
    return f"vector<{width}x{operand.element}>"


def vector_load(body: Lines, operand: Operand, dims: list[str], width: int) -> str:
    at = operand_indices(body, operand, dims)
    align = width * ELEMENT_BYTES[operand.element]
    return body.op(f"vector.load %a{operand.position}[{at}] {{alignment = {align} : i64}} : "
                   f"{operand.memref}, {vector_type(operand, width)}")


def vector_store(body: Lines, lanes: list[str], operand: Operand, dims: list[str], width: int) -> None:
    packed = body.op(f"vector.from_elements {', '.join(lanes)} : {vector_type(operand, width)}")
    at = operand_indices(body, operand, dims)
    align = width * ELEMENT_BYTES[operand.element]
    body.add(f"vector.store {packed}, %a{operand.position}[{at}] {{alignment = {align} : i64}} : "
             f"{operand.memref}, {vector_type(operand, width)}")


def lanes_of(body: Lines, operand: Operand, vector: str, width: int) -> list[str]:
    return [body.op(f"vector.extract {vector}[{j}] : {operand.element} from "
                    f"{vector_type(operand, width)}") for j in range(width)]


def vector_loop_kernel(op, plan: VectorPlan) -> str:
    """The loop kernel on vectors: thread t handles vector point t."""
    width = plan.width
    sizes = list(op.space.sizes[:-1]) + [op.space.sizes[-1] // width]
    points = math.prod(sizes)
    lines = launch_header((max(1, -(-points // THREADS)), 1, 1), (THREADS, 1, 1))
    body = Lines()
    point = global_thread(body)
    inner = body.nested()
    _vector_point(inner, op, plan, point, sizes)
    guarded(body, body.op(f"arith.cmpi ult, {point}, {body.const(points)} : index"), inner)
    return helper(op.name, op.helper_types(), lines + body.lines + ["gpu.terminator", "}"])


def _vector_point(body: Lines, op, plan: VectorPlan, point: str, sizes: list[int]) -> None:
    width = plan.width
    dims = delinearize(body, point, sizes)
    dims[-1] = body.op(f"arith.muli {dims[-1]}, {body.const(width)} : index")
    lanes = []                         # outputs too: a region may read them (unread: dead, erased)
    for operand, vectored in zip(op.operands, plan.vectored):
        if vectored:
            lanes.append(lanes_of(body, operand, vector_load(body, operand, dims, width), width))
        else:
            lanes.append([load(body, operand, dims)] * width)
    results = [call_body(body, op.name, [lane[j] for lane in lanes] + op.capture_names(),
                         op.body_types(), op.result_types()) for j in range(width)]
    for k, operand in enumerate(op.outputs):
        vector_store(body, [results[j][k] for j in range(width)], operand, dims, width)


# ---- block reductions along the innermost dim: each thread folds 16 bytes per step

def reduction_vector_plan(op) -> VectorPlan | None:
    """Vector reads for a block reduction whose innermost loop dim is reduced: the inputs
    (and the pointwise outputs a multi-output fusion stores) as vectors or broadcast
    scalars; the reduced output is a register, not read here."""
    space = op.space
    if not space.sizes or not space.reduction[-1]:
        return None
    inner = len(space.sizes) - 1
    accessed = [o for k, o in enumerate(op.operands) if k < op.inputs or k - op.inputs in op.pointwise]
    width = vector_width(accessed, inner, space.sizes[-1])
    if width < 2:
        return None
    vectored = tuple(access(o, inner, width) if o in accessed else False for o in op.operands)
    if None in vectored or not all(vectored[op.inputs + j] for j in op.pointwise):
        return None
    return VectorPlan(width, vectored)


def vector_fold_step(op, parallel_dims: list[str], plan: VectorPlan):
    """A loop step over vector point k of the reduced dims (the innermost counted in
    vectors): loads once, then folds the lanes in order through the region."""
    width = plan.width
    sizes = op.space.reduction_sizes[:-1] + [op.space.reduction_sizes[-1] // width]

    def step(loop: Lines, k: str, carried: list[str]) -> list[str]:
        reduced = delinearize(loop, k, sizes)
        reduced[-1] = loop.op(f"arith.muli {reduced[-1]}, {loop.const(width)} : index")
        dims = interleave(op.space, parallel_dims, reduced)
        lanes = [lanes_of(loop, o, vector_load(loop, o, dims, width), width) if vectored
                 else [load(loop, o, dims)] * width
                 for o, vectored in zip(op.operands[:op.inputs], plan.vectored)]
        stored = {j: [] for j in op.pointwise}
        for lane in range(width):
            folded = iter(carried)
            outs = [placeholder(loop, o.element) if j in op.pointwise else next(folded)
                    for j, o in enumerate(op.outputs)]
            results = call_body(loop, op.name, [v[lane] for v in lanes] + outs + op.capture_names(),
                                op.body_types(), op.result_types())
            for j in op.pointwise:
                stored[j].append(results[j])
            carried = [r for j, r in enumerate(results) if j not in op.pointwise]
        for j in op.pointwise:
            vector_store(loop, stored[j], op.outputs[j], dims, width)
        return carried
    return step
