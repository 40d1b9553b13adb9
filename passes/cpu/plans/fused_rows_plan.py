"""Which linalg ops are fused into one row loop (passes/cpu/schedules/fused_rows.mlir).

Read by xla-apply-schedules before the per-op plans of schedule_plan.py:
softmax's max -> exp -> sum -> divide (layernorm's mean -> variance ->
normalize) become one group, planned on its last consumer, whose members
then get no plan of their own.
"""

from __future__ import annotations

import functools

from xlac.mlir import ir
from xlac.passes.base import dim_position
from xlac.passes.cpu.plans.chunks import static_tiles, thread_tiles
from xlac.passes.cpu.plans.narrow_tails import has_narrow_float, lanes
from xlac.passes.cpu.plans.schedule_plan import (
    LoopNest,
    Machine,
    Plan,
    has_math,
    loop_nest,
    simple_body,
    vector_size,
)

# Most producers one row group takes (softmax and layernorm have 3-5; the
# shared models at most 5). Without a bound, each elementwise root of a chain
# of kernels walked back through all the earlier ones before finding no
# reduction among them: quadratic (17,501 chained ops: 0.7 s of planning).
ROW_GROUP_MAX = 32
ROW_BLOCK = 1                # rows per step: one row of exponentials (4 KiB per 1024 f32) stays in L1


def fused_rows_plan(root: ir.Operation, machine: Machine, nests: dict | None = None) -> Plan | None:
    """Softmax- and layernorm-like chains ending in ``root`` (fused_rows.mlir).

    ``root`` is elementwise over rows; the group is every producer, back
    through the operands, that is a row reduction, an elementwise op over the
    same loops, or a reduction's init fill, as long as only the group uses
    it. There must be a reduction among them: otherwise the elementwise
    ops were already fused into one, and nothing is gained. ``nests``: the
    row nests found so far, kept by the caller across the roots of one module
    (a fill CSE shares is read by every reduction: each root looks at them all).
    """
    row_nest = _Nests({} if nests is None else nests)
    nest = row_nest(root)
    if nest is None or nest.reductions:
        return None
    members = _row_group(root, nest.extents, row_nest)
    if members is None or not any(row_nest(op) and row_nest(op).reductions for op in members):
        return None
    rank = len(nest.extents)
    chunks = _chunks(nest.extents, machine.threads)
    chunk_rows = chunks[-1] or nest.extents[-2]
    rows = ROW_BLOCK if chunk_rows % ROW_BLOCK == 0 else 1
    math_heavy = any(has_math(op) for op in (root, *members) if op.name == "linalg.generic")
    vector = vector_size(nest.extents[-1], lanes(nest, machine), 4 if math_heavy else 1)
    return Plan(f"xla_fused_rows_{rank}d", chunks + (rows, vector), tuple(members))


def _chunks(extents: tuple[int, ...], threads: int) -> tuple[int, ...]:
    """The forall tiles of the rows. Over [batch, heads, queries] a chunk
    that leaves part of a dim before the queries (ViT's 3 heads split 2 + 1)
    does not vectorize (its tiles keep a dynamic size): those dims are split
    into divisors only."""
    if len(extents) == 4:
        return static_tiles(extents[:-1], threads, (1, 1, 1), extents[-1])
    return thread_tiles(extents[:-1], threads, 1, extents[-1])


def is_row_reduction(op: ir.Operation, nests: dict | None = None) -> bool:
    """Whether ``op`` is a reduction a row group can take (its innermost loop).
    ``nests``: as ``fused_rows_plan``'s (the nest found here is kept there)."""
    nest = _row_nest(op) if nests is None else _Nests(nests)(op)
    return nest is not None and bool(nest.reductions)


class _Nests:
    """``_row_nest`` remembered per op."""

    def __init__(self, known: dict):
        self.known = known

    def __call__(self, op) -> LoopNest | None:
        key = op.operation
        if key not in self.known:
            self.known[key] = _row_nest(op)
        return self.known[key]


def _row_nest(op: ir.Operation) -> LoopNest | None:
    """The loops of a generic in a row group: 2-4 of them (attention's scores
    are [batch, heads, queries, keys]), 4-byte elements,
    every loop parallel, or only the innermost a reduction; result map the
    identity (elementwise) or the outer dims (reduction)."""
    if op.name != "linalg.generic" or len(op.results) != 1 or not simple_body(op):
        return None
    nest = loop_nest(op)
    # no bf16/f16 operand: such a member (jax's bf16 softmax: exp in bf16, its sum
    # in f32) failed to vectorize in the group, which then ran as scalar loops
    if nest is None or len(nest.extents) not in (2, 3, 4) or nest.element_bytes != 4 \
            or has_narrow_float(op):
        return None
    rank = len(nest.extents)
    kept = rank - len(nest.reductions)
    if nest.reductions not in ((), (rank - 1,)):
        return None
    out = ir.AffineMapAttr(op.attributes["indexing_maps"][len(op.operands) - 1]).value
    if [dim_position(e) for e in out.results] != list(range(kept)):
        return None
    return nest


def _row_group(root: ir.Operation, extents: tuple[int, ...], row_nest: _Nests) -> list[ir.Operation] | None:
    """The producers fusable into ``root``'s rows, consumers first; None if
    there is no reduction among them, an init fill among them is also used
    outside the group, or past ``ROW_GROUP_MAX``.

    A row op that something outside the group also reads is not fused: the
    group reads its result as an input, as it reads any other kernel's, and
    the search does not go past it. (The whole group was refused for it:
    every layer norm of a residual stream whose ``x`` the next residual add
    reads again ran as three kernels, three passes over ``x``; and where
    each ``x`` was read only by row ops, the search went back through every
    earlier layer to ROW_GROUP_MAX: BERT's post-LN layer norms.) Candidates
    are decided latest first, so every reader of one that could join is
    decided before it."""
    found: list[ir.Operation] = []
    group = {_key(root)}
    candidates = _operand_candidates(root, root, extents, row_nest, set())
    considered = set(candidates)
    while candidates:
        # _later_first orders later ops first: its least is the latest
        latest = min(candidates, key=functools.cmp_to_key(_later_first))
        candidates.remove(latest)
        op = latest.opview
        if not all(_key(use.owner) in group for use in op.results[0].uses):
            if op.name == "linalg.fill":
                return None
            continue                            # read as an input
        found.append(op)
        group.add(latest)
        if len(found) > ROW_GROUP_MAX:
            return None
        fresh = _operand_candidates(op, root, extents, row_nest, considered)
        considered |= set(fresh)
        candidates += fresh
    if not any(op.name == "linalg.generic" and row_nest(op).reductions for op in found):
        return None                             # nothing a row loop would gain
    if any(_key(op).block != _key(root).block for op in found):
        return None                             # a fill hoisted out of the root's loop
    # the block's order, by MLIR's cached op order: numbering the whole block
    # here, once per root, made planning quadratic in the program's size
    return sorted(found, key=functools.cmp_to_key(_later_first))


def _operand_candidates(op: ir.Operation, root: ir.Operation, extents: tuple[int, ...], row_nest: _Nests,
                        considered: set[ir.Operation]) -> list[ir.Operation]:
    """The producers of ``op``'s operands in ``root``'s block that could join
    its group: its init fill, or row ops over ``root``'s rows that nothing
    but such row ops read (a contraction reading one: the search stops)."""
    found = []
    for index, operand in enumerate(op.operands):
        owner = operand.owner
        if not isinstance(owner, ir.OpView) or _key(owner) in considered or _key(owner) in found:
            continue
        is_init = op.name == "linalg.generic" and index == len(op.operands) - 1
        init_fill = owner.name == "linalg.fill" and is_init and op != root
        if init_fill or _row_op_only_rows_read(owner, root, extents, row_nest):
            found.append(_key(owner))
    return found


def _row_op_only_rows_read(owner, root: ir.Operation, extents: tuple[int, ...], row_nest: _Nests) -> bool:
    """Whether ``owner`` is a row op over ``root``'s rows, in its block, that
    only ops which could join the group read."""
    if owner.name != "linalg.generic" or _key(owner).block != _key(root).block:
        return False
    nest = row_nest(owner)
    return nest is not None and nest.extents == extents \
        and all(_may_join(use.owner, root, extents, row_nest) for use in owner.results[0].uses)


def _may_join(user, root: ir.Operation, extents: tuple[int, ...], row_nest: _Nests) -> bool:
    """Whether ``user`` could be in ``root``'s group (the root, or a generic over its rows)."""
    if _key(user) == _key(root):
        return True
    if user.name != "linalg.generic":
        return False
    nest = row_nest(user)
    return nest is not None and nest.extents == extents


def _later_first(first: ir.Operation, second: ir.Operation) -> int:
    if _key(first) == _key(second):
        return 0
    return 1 if _key(first).is_before_in_block(_key(second)) else -1


def _key(op) -> ir.Operation:
    return op.operation
