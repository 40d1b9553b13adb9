"""Why an op runs as scalar loops: what xla-apply-schedules' remarks say.

Each remark names the op, the tensors it reads and writes (element types and
shapes) and one of three reasons, so that a slow path is found from the
compile and not from a profile:

- ``dynamic shape``: a tensor with a ``?`` dim; the schedules need static extents;
- ``element type X not supported``: the vector schedules take the types of
  ``schedule_plan.VECTOR_ELEMENT_BYTES`` (i1 is a byte in memory but a bit in a
  vector register; complex numbers are structs);
- ``no schedule for the op class``: with what the plans could not take
  (windowed indexing, a body with more than arith/math, a reduction form).

Ops a lowering wrote as scalar loops itself (sort, scatter, top-k: scf loops
with element reads and writes, no linalg op) are tagged by
``helper_calls.replace_with_call`` with the StableHLO op they replace and
said here alike.
"""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import nested_ops
from xlac.passes.cpu.plans.parallel_loops_plan import PARALLEL_LOOPS
from xlac.passes.cpu.plans.schedule_plan import (
    MIN_WORK,
    VECTOR_ELEMENT_BYTES,
    iterations,
    iterator_kinds,
    loop_nest,
    narrow_float_sum,
    simple_body,
)
from xlac.passes.helper_calls import LOWERED_FROM  # on a lowering's outermost loops: the op it replaces

_LOOPS = ("scf.for", "scf.forall", "scf.while")


_PLANNED = "xla_schedule_planned"


def mark_planned(planned) -> None:
    """Tag the ops a schedule was planned for; tiling copies the tag to their tiles."""
    for op, _ in planned:
        op.attributes[_PLANNED] = ir.UnitAttr.get(op.context)


def left_whole(module: ir.Operation) -> list[tuple[ir.Operation, str]]:
    """Planned ops still whole at a function's top level, untiled: a schedule that
    applied without taking them (they run as scalar loops) is said, not hidden.
    Clears the tags."""
    found = []
    for op in nested_ops(module):
        if _PLANNED in op.attributes:
            del op.attributes[_PLANNED]
            if op.parent.name == "func.func":
                found.append((op, f"xla-apply-schedules: the schedule of {op.name} on {tensors(op)} "
                                  "left it whole: it runs as scalar loops on one core"))
    return found


def unplanned(ops: list[ir.Operation], planned, i1_vectors: bool = True) -> list[tuple[ir.Operation, str]]:
    """A remark for each op of real size that no schedule takes, and for each
    whose scalar loops are only split among the threads: the op, its tensors
    and why (plans/unscheduled.py)."""
    taken = {op for op, _ in planned} | {m for _, plan in planned for m in plan.members}
    scalar = {op for op, plan in planned if plan.sequence.startswith(PARALLEL_LOOPS)}
    return [(op, f"xla-apply-schedules: no vector schedule for {op.name} ({iterations(op)} "
                 f"iterations) on {tensors(op)}: {why(op, i1_vectors)}: "
                 + ("it runs as scalar loops split among the threads" if op in scalar
                    else "it runs as scalar loops on one core"))
            for op in ops if (op not in taken or op in scalar) and op.name not in _NO_WORK
            and iterations(op) >= MIN_WORK and not lane_arg_reduction(op, i1_vectors)]


def lane_arg_reduction(op: ir.Operation, i1_vectors: bool = True) -> bool:
    """Whether xla-lane-arg-reductions will run ``op`` (an argmax's
    linalg.generic on tensors) as vector loops once it is on buffers."""
    from xlac.passes.cpu.arg_combiner import match
    from xlac.passes.cpu.lane_arg_reductions import takes
    found = match(op)
    return found is not None and takes(found, buffers=False, i1_vectors=i1_vectors)


_NO_WORK = ("linalg.fill", "linalg.yield", "linalg.index")


def tensors(op: ir.Operation) -> str:
    """``64x128xf32, 128xf32 -> 64x128xf32``: the op's inputs and results."""
    ins = [_short(v.type) for v in op.operands if isinstance(v.type, ir.ShapedType)]
    outs = [_short(v.type) for v in op.results if isinstance(v.type, ir.ShapedType)]
    return f"{', '.join(dict.fromkeys(ins)) or 'nothing'} -> {', '.join(outs) or 'nothing'}"


def why(op: ir.Operation, i1_vectors: bool = True) -> str:
    """The reason no vector schedule took the linalg op ``op`` (``i1_vectors``:
    xla-apply-schedules' option, off where xla-i1-memory-as-i8 is disabled)."""
    types = [v.type for v in [*op.operands, *op.results] if isinstance(v.type, ir.ShapedType)]
    if any(not t.has_static_shape for t in types):
        return "dynamic shape: the schedules need static extents"
    supported = set(VECTOR_ELEMENT_BYTES) - (set() if i1_vectors else {"i1"})
    odd = sorted({str(t.element_type) for t in types} - supported)
    if odd:
        return f"element type {', '.join(odd)} not supported by the vector schedules"
    return f"no schedule for the op class ({_class_detail(op)})"


def _class_detail(op: ir.Operation) -> str:
    if op.name != "linalg.generic":
        return f"no plan takes {op.name}"
    nest = loop_nest(op)
    if nest is None:
        return "windowed or strided indexing maps"
    if not simple_body(op, gathers=True):
        inner = [o.operation.name for o in op.regions[0].blocks[0].operations
                 if not o.operation.name.startswith(("arith.", "math.", "linalg."))]
        return f"its body has {inner[0]}" if inner else "its body reads a slice"
    kinds = iterator_kinds(op, len(nest.extents))
    if "reduction" in kinds and narrow_float_sum(op, nest):
        return ("a sum or product of 2-byte floats in their own type: in 16 lanes it would "
                "round differently from the one-by-one order StableHLO gives (a plain sum is "
                "widened to f32 by xla-widen-narrow-sums)")
    if "reduction" in kinds:
        return (f"a reduction over loops {list(nest.reductions)} of {len(kinds)}, "
                f"{nest.element_bytes}-byte elements: the reduction schedules take one innermost "
                "or all outer reduced loops")
    return "no plan for this loop nest"


def lowered_loops(module: ir.Operation, min_work: int) -> list[tuple[ir.Operation, str]]:
    """A remark for each loop nest a lowering wrote as scalar loops, of real size."""
    found = []
    _walk(module, min_work, found)
    return found


def _walk(op: ir.Operation, min_work: int, found: list) -> None:
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                if inner.name in _LOOPS and LOWERED_FROM in inner.attributes:
                    source = ir.StringAttr(inner.attributes[LOWERED_FROM]).value
                    del inner.attributes[LOWERED_FROM]
                    remark = _lowered_remark(inner, source, min_work)
                    if remark:
                        found.append((inner, remark))
                elif not inner.name.startswith("linalg."):
                    _walk(inner, min_work, found)


def _lowered_remark(loop: ir.Operation, source: str, min_work: int) -> str:
    types = [v.type for v in [*loop.operands, *loop.results] if isinstance(v.type, ir.ShapedType)
             and v.type.has_static_shape]
    elements = max((math.prod(t.shape) for t in types), default=0)
    if elements < min_work:
        return ""
    where = "split among the threads" if loop.name == "scf.forall" else "on one core"
    shapes = ", ".join(dict.fromkeys(_short(t) for t in types))
    return (f"xla-apply-schedules: no vector schedule for {source} ({elements} elements) on "
            f"{shapes}: no schedule for the op class (its lowering writes {loop.name} loops "
            f"of element reads and writes): it runs as scalar loops {where}")


def _short(type_: ir.Type) -> str:
    shaped = ir.ShapedType(type_)
    dims = ["?" if d == ir.ShapedType.get_dynamic_size() else str(d) for d in shaped.shape] \
        if shaped.has_rank else ["*"]
    return "x".join([*dims, str(shaped.element_type)])
