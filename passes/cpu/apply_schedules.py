"""xla-apply-schedules: tile, parallelize and vectorize linalg ops with the
transform-dialect schedules in passes/cpu/schedules/."""

from __future__ import annotations

import os

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions, nested_ops, post_order_positions
from xlac.passes.buffers.own_fills import own_fill
from xlac.passes.cpu.amx_contractions import MARK as AMX_MARK
from xlac.passes.cpu.amx_epilogue import EPILOGUE as AMX_EPILOGUE
from xlac.passes.cpu.plans.contraction_plan import contraction_plan
from xlac.passes.cpu.plans.epilogue_plan import epilogue_plan
from xlac.passes.cpu.plans.fused_rows_plan import fused_rows_plan, is_row_reduction
from xlac.passes.cpu.plans.parallel_loops_plan import parallel_loops_plan
from xlac.passes.cpu.plans.schedule_functions import keep_planned, outline_planned
from xlac.passes.cpu.plans.schedule_halves import applied_in_halves
from xlac.passes.cpu.plans.schedule_plan import CONTRACTIONS, MIN_WORK, POOLINGS, Machine, Plan, plan_for
from xlac.passes.cpu.plans.schedule_script import (
    MEMBER_TAG,
    PLANNED_TAG,
    append_schedules,
    clean_up,
    interpret,
)
from xlac.passes.cpu.plans.unscheduled import left_whole, lowered_loops, mark_planned, tensors, unplanned
from xlac.passes.fusion.merge_kernel_generics import distinct_inits
from xlac.passes.remarks import emit_remarks
from xlac.record import record

_TAG, _MEMBER_TAG = PLANNED_TAG, MEMBER_TAG


@record
class ApplySchedules(ModulePass):
    """Give each linalg op the transform schedule of its class and apply it.

    Why: convert-linalg-to-loops alone makes scalar loops on one core. Each op
    is classified (matmul, batch matmul, reduction, elementwise; see
    schedule_plan.py) and tagged; the named sequences of passes/cpu/schedules/
    are put into the module with a generated `@__transform_main` that calls
    the right one per tag with its tile sizes; the upstream
    `transform-interpreter` runs it; the schedules and tags are removed.
    Result: scf.forall over the threads' chunks, vector ops inside.
    Ops no schedule fits, and any whose schedule fails to apply, are left as
    they were (scalar loops later), so a schedule can only cost speed; each
    such op of real size gets a remark saying why (exe.fusion_report()
    lists them, dumps keep them in remarks.txt).

    Example: `linalg.matmul` 1024x1024x1024 f32 becomes an scf.forall of
    512x1024 chunks whose 8x32 register tiles are `vector.contract`s over k.
    Option `threads` (0: every core this process may use) sets how many
    chunks the parallel loops get, 1 makes no scf.forall; `vector-bytes`
    (0: this host's, else 16 SSE, 32 AVX2, 64 AVX-512) the SIMD width the
    vectors are cut for; `l1d-bytes` (0: not known) the L1 data cache some
    blocks are sized for. The pipelines set them from the CPU model.
    `i1-vectors` (default on) lets the schedules take ops on i1 tensors, whose
    vector moves xla-i1-memory-as-i8 makes byte moves: the pipelines turn it
    off where that pass is disabled (then those ops run as scalar loops).
    `share-kernels` (default on) schedules each distinct kernel once. The
    kernels stay functions (`@xla_scheduled_<n>`, called where they were)
    through bufferization; xla-inline-schedule-calls puts a copy at each
    call, located there, on the way to LLVM (schedule_functions.py).
    """

    name = "xla-apply-schedules"
    threads: int = 0
    vector_bytes: int = 0
    l1d_bytes: int = 0
    share_kernels: bool = True
    i1_vectors: bool = True

    def run(self, module: ir.Operation) -> None:
        machine = self.machine()
        ops = _linalg_ops(module)
        planned = _plans(ops, machine)
        if not self.i1_vectors:
            planned = _without_i1(planned, machine)
        emit_remarks(module, unplanned(ops, planned, self.i1_vectors)   # now: applying replaces the ops
                     + lowered_loops(module, MIN_WORK))
        mark_planned(planned)
        planned = outline_planned(module, planned, self.share_kernels)
        cleaned = bool(planned) and _apply(module, planned)
        if planned and not cleaned:
            kept, failed = [], []
            for item in planned:
                if _applies(module, item, failed):
                    kept.append(item)
                elif item[1].members:   # a fused group that does not apply: its ops one by one
                    kept += [single for single in _singles(item, machine)
                             if _applies(module, single, failed)]
            emit_remarks(module, failed)
            cleaned = bool(kept) and (_apply(module, kept) or _apply_one_by_one(module, kept))
        keep_planned(module, cleaned=cleaned)   # cleaned: @xla_cleanup ran on the module whole
        _align_buffers(module)
        emit_remarks(module, left_whole(module))

    def machine(self) -> Machine:
        from xlac.cpu_model import cpu_model
        threads = self.threads or len(os.sched_getaffinity(0))
        return Machine(threads, self.vector_bytes or cpu_model("host").vector_bytes, self.l1d_bytes)


def _without_i1(planned, machine: Machine) -> list[tuple[ir.Operation, Plan]]:
    """``planned`` with no vector schedule for an op on i1 tensors: those get
    the threads' scalar loops (a generic) or nothing; the other ops of a
    fused group they were in are planned one by one."""
    kept = []
    for op, plan in planned:
        group = [*reversed(plan.members), op]
        if not any(_touches_i1(member) for member in group):
            kept.append((op, plan))
            continue
        for single in group:
            if not _touches_i1(single):
                found = _plan(single, machine, fuse_producers=False)
            else:
                found = parallel_loops_plan(single, machine) if single.name == "linalg.generic" else None
            if found is not None:
                kept.append((single, found))
    return kept


def _touches_i1(op: ir.Operation) -> bool:
    return any(isinstance(v.type, ir.ShapedType) and str(ir.ShapedType(v.type).element_type) == "i1"
               for v in [*op.operands, *op.results])


def _align_buffers(module: ir.Operation) -> None:
    """Align the buffers schedules allocate (packed panels of B) to a cache
    line: the schedule's bufferize_to_allocation sets none, malloc gives 16
    bytes, and every 64-byte vector read of the panel would span two lines."""
    for op in nested_ops(module):
        if op.name == "memref.alloc" and "alignment" not in op.attributes:
            op.attributes["alignment"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64, module.context), 64)


def _plans(ops: list[ir.Operation], machine: Machine) -> list[tuple[ir.Operation, Plan]]:
    """A plan per op; a row group's last consumer first takes its producers."""
    for op in ops:
        if op.name in CONTRACTIONS or op.name in POOLINGS or is_row_reduction(op):
            _own_fill(op)
        distinct_inits(op)
    fused: set[ir.Operation] = set()
    grouped = {}
    nests: dict = {}                # no IR edits below until the loop ends
    for op in reversed(ops):
        if op.operation not in fused and (plan := fused_rows_plan(op, machine, nests)) is not None:
            grouped[op.operation] = plan
            fused |= {member.operation for member in plan.members}
    for op in ops:                  # a matmul's epilogue takes the matmul into its chunks
        if op.operation not in fused and op.operation not in grouped \
                and (plan := epilogue_plan(op, machine)) is not None \
                and not fused & {member.operation for member in plan.members}:
            grouped[op.operation] = plan
            fused |= {member.operation for member in plan.members}
    plans = [(op, plan) for op in ops if op.operation not in fused
             and (plan := grouped.get(op.operation) or _plan(op, machine)) is not None]
    # a contraction's fused producers (a transposed B) are planned with it
    fused |= {member.operation for _, plan in plans for member in plan.members}
    planned = [(op, plan) for op, plan in plans if op.operation not in fused]
    for member in fused:            # after the lookups above: this edits the IR
        _own_empty_init(member)
    return planned


_PENDING = "xla_schedule_pending"


def _apply_one_by_one(module: ir.Operation, planned: list[tuple[ir.Operation, Plan]]) -> bool:
    """Each schedule applies alone but not all together: commit them one at a
    time. A commit replaces the module's ops, so each op is found again by a tag.
    Whether any was committed."""
    committed = False
    i64 = ir.IntegerType.get_signless(64, module.context)
    singles = [(op, plan) for op, plan in planned if not plan.members]
    for index, (op, _) in enumerate(singles):
        op.attributes[_PENDING] = ir.IntegerAttr.get(i64, index)
    for index, (_, plan) in enumerate(singles):
        found = [op for op in nested_ops(module) if _PENDING in op.attributes
                 and ir.IntegerAttr(op.attributes[_PENDING]).value == index]
        if found:
            del found[0].attributes[_PENDING]
            committed = _apply(module, [(found[0], plan)]) or committed
    for op in nested_ops(module):
        if _PENDING in op.attributes:
            del op.attributes[_PENDING]
    return committed


def _plan(op: ir.Operation, machine: Machine, fuse_producers: bool = True) -> Plan | None:
    if op.name in CONTRACTIONS or op.name in POOLINGS:
        return contraction_plan(op, machine, fuse_producers)
    plan = plan_for(op, machine)
    if plan is None and op.name == "linalg.generic":      # no vector schedule: threads at least
        return parallel_loops_plan(op, machine)
    return plan


def _linalg_ops(module: ir.Operation) -> list[ir.Operation]:
    found = []
    for func in functions(module):
        found += [op for op in nested_ops(func) if op.name.startswith("linalg.")
                  and op.name != "linalg.yield" and op.parent.name != "linalg.generic"
                  and AMX_MARK not in op.attributes and AMX_EPILOGUE not in op.attributes]  # xla-amx-calls' own
    return found


def _singles(item: tuple[ir.Operation, Plan], machine: Machine) -> list[tuple[ir.Operation, Plan]]:
    root, group = item
    return [(op, plan) for op in (*reversed(group.members), root)
            if (plan := _plan(op, machine, fuse_producers=False)) is not None]


def _own_fill(op: ir.Operation) -> None:
    """Give a contraction (or a row reduction) the fill of its init to itself.
    CSE merges equal fills, but a fill is fused into its contraction's thread
    chunks (a row group's loop): shared by two, it cannot be fused into both,
    and both schedules fail (every softmax and layer norm of a transformer
    shares its reductions' -inf and 0 fills with the other layers'). Nor can a
    fill hoisted out of the loop (a while body) the contraction is in: the
    contraction's kernel is outlined alone. (The original stays for its
    other users; unused, canonicalization drops it.)"""
    init = op.operands[len(op.operands) - 1].owner
    hoisted = isinstance(init, ir.OpView) and init.operation.block != op.operation.block
    fresh = own_fill(op, always=hoisted)
    if fresh is not None:
        _own_empty_init(fresh)
    elif isinstance(init, ir.OpView) and init.name == "linalg.fill":
        # the fill kept (its other users got clones) may still write into an
        # empty CSE shares with an epilogue's result: the epilogue then read
        # C's edge tiles from the buffer it wrote, and bufferization copied
        # each thread chunk of the result out and back (the train step's
        # second SGD update: 2 x 4 MB a call)
        _own_empty_init(init)


def _own_empty_init(op: ir.Operation) -> None:
    """Give a fused op a tensor.empty init of its own. Sharing one (CSE makes
    softmax's exp and divide share theirs), the fused exp would write into
    the slice of the output the divide writes, and bufferization would copy
    the whole chunk to keep both."""
    init = op.operands[len(op.operands) - 1].owner
    if not isinstance(init, ir.OpView) or init.name != "tensor.empty" or \
            len(list(init.results[0].uses)) == 1:
        return
    fresh = init.operation.clone(ip=ir.InsertionPoint(op))
    op.operands[len(op.operands) - 1] = fresh.results[0]


def _apply(module: ir.Operation, planned: list[tuple[ir.Operation, Plan]],
           commit: bool = True, remarks: list | None = None) -> bool:
    """Schedule ``planned`` on a copy; on success (and ``commit``) keep the copy.
    Committed in two halves at once where a piece worker is idle (``schedule_halves``:
    the same module); any failure there is tried whole, as without one."""
    if commit and applied_in_halves(module, planned):
        return True
    members = [member for _, plan in planned for member in plan.members]
    order = _match_order(module, [op for op, _ in planned]), _match_order(module, members)
    for op, _ in planned:
        op.attributes[_TAG] = ir.UnitAttr.get(module.context)
    for member in members:
        member.attributes[_MEMBER_TAG] = ir.UnitAttr.get(module.context)
    copy = module.clone()
    for op, _ in planned:           # untag before the originals may be erased
        del op.attributes[_TAG]
    for member in members:
        del member.attributes[_MEMBER_TAG]
    # a trial (not ``commit``) asks only whether the schedules apply: without
    # the cleanup over the whole module, each trial costs its own kernel's
    # work (ViT, one group failing: 43 trials 2.7 -> 0.4 s)
    why = append_schedules(copy, [plan for _, plan in planned], order) or interpret(copy)
    if commit and not why:
        why = clean_up(copy)
    if why:
        if remarks is not None:
            remarks += [(op, f"xla-apply-schedules: schedule {plan.sequence} did not apply to {op.name} "
                             f"on {tensors(op)}, the op runs as scalar loops: {why}") for op, plan in planned]
        return False
    if commit:
        _replace_body(module, copy)
    return True


def _applies(module: ir.Operation, item: tuple[ir.Operation, Plan], remarks: list) -> bool:
    """Whether ``item``'s schedule applies, tried on its own function when its
    ops have one (outline_planned put them there), else on the whole module.

    Why: a trial on a clone of the whole module cost a clone, a pass manager and
    a verification of everything per planned op: a program where one schedule
    fails paid that for each of its kernels (a ResNet-18 training step, 257
    planned ops: 36 s of its 47 s bufferize stage). A failure on the function
    alone is tried again on the module, so only the module can say no.
    """
    function = _function_of(item)
    if function is not None and _applies_in(function, item):
        return True
    return _apply(module, [item], commit=False, remarks=remarks)


def _function_of(item: tuple[ir.Operation, Plan]) -> ir.Operation | None:
    """The function holding ``item``'s op and every member, if one does."""
    ops = [item[0].operation, *(member.operation for member in item[1].members)]
    found = {_enclosing_function(op) for op in ops}
    return found.pop() if len(found) == 1 else None


def _enclosing_function(op: ir.Operation) -> ir.Operation | None:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    return parent


def _applies_in(function: ir.Operation, item: tuple[ir.Operation, Plan]) -> bool:
    """The schedule of ``item`` tried on a module holding a clone of ``function`` alone."""
    op, plan = item
    members = [member.operation for member in plan.members]
    order = (post_order_positions(function, {op.operation: 0}),
             post_order_positions(function, {member: index for index, member in enumerate(members)}))
    unit = ir.UnitAttr.get(function.context)
    op.attributes[_TAG] = unit
    for member in members:
        member.attributes[_MEMBER_TAG] = unit
    with function.context, ir.Location.unknown():
        alone = ir.Module.create()
        function.clone(ip=ir.InsertionPoint(alone.body))
    del op.attributes[_TAG]
    for member in members:
        del member.attributes[_MEMBER_TAG]
    return not (append_schedules(alone.operation, [plan], order)
                or interpret(alone.operation))


def _match_order(module: ir.Operation, ops: list[ir.Operation]) -> list[int]:
    """Where each of ``ops`` comes in what one ``transform.structured.match``
    of their tag returns (a post-order walk, as the match's own).

    Why one match split into handles: a match per op walks the whole module
    each time, quadratic in the program's size (241 s of a 3,300-op compile).
    """
    return post_order_positions(module, {op.operation: index for index, op in enumerate(ops)})


def _replace_body(module: ir.Operation, scheduled: ir.Operation) -> None:
    """Move ``scheduled``'s functions into ``module``, minus schedules and tags."""
    body = module.regions[0].blocks[0]
    for op in list(body.operations):
        op.operation.erase()
    for op in list(scheduled.regions[0].blocks[0].operations):
        if op.operation.name != "transform.named_sequence":
            body.append(op.operation)
    for op in nested_ops(module):
        for tag in (_TAG, _MEMBER_TAG):
            if tag in op.attributes:
                del op.attributes[tag]
