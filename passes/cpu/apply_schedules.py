"""xla-apply-schedules: tile, parallelize and vectorize linalg ops with the
transform-dialect schedules in passes/schedules/."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from xlac.mlir import ir, passmanager
from xlac.passes.base import ModulePass, functions, nested_ops
from xlac.passes.cpu.fused_rows_plan import fused_rows_plan
from xlac.passes.cpu.schedule_plan import Plan, plan_for
from xlac.targets.cpu.runtime import configured_threads

SCHEDULES = Path(__file__).parent / "schedules"
_TAG = "xla_schedule"          # op attribute the generated main matches on
_MEMBER_TAG = "xla_schedule_member"     # ... and on the ops fused into a scheduled op
_LIBRARY_ATTR = "transform.with_named_sequence"
ERRORS_ENV = "XLAC_SCHEDULE_ERRORS"     # set: print why a schedule did not apply


@dataclass(frozen=True)
class ApplySchedules(ModulePass):
    """Give each linalg op the transform schedule of its class and apply it.

    Why: convert-linalg-to-loops alone makes scalar loops on one core. Each op
    is classified (matmul, batch matmul, reduction, elementwise; see
    schedule_plan.py) and tagged; the named sequences of passes/schedules/
    are put into the module with a generated `@__transform_main` that calls
    the right one per tag with its tile sizes; the upstream
    `transform-interpreter` runs it; the schedules and tags are removed.
    Result: scf.forall over the threads' chunks, vector ops inside.
    Ops no schedule fits, and any whose schedule fails to apply, are left as
    they were (scalar loops later), so a schedule can only cost speed.

    Example: `linalg.matmul` 1024x1024x1024 f32 becomes an scf.forall of
    512x1024 chunks whose 8x32 register tiles are `vector.contract`s over k.
    Option `threads` (0: XLAC_NUM_THREADS, else every core this process may
    use) sets how many chunks the parallel loops get; 1 makes no scf.forall.
    """

    name = "xla-apply-schedules"
    threads: int = 0

    def run(self, module: ir.Operation) -> None:
        threads = self.threads or configured_threads()
        planned = _plans(_linalg_ops(module), threads)
        if not planned:
            return
        if not _apply(module, planned):
            kept = []
            for item in planned:
                if _apply(module, [item], commit=False):
                    kept.append(item)
                elif item[1].members:   # a fused group that does not apply: its ops one by one
                    kept += [single for single in _singles(item, threads)
                             if _apply(module, [single], commit=False)]
            if kept:
                _apply(module, kept)


def _plans(ops: list[ir.Operation], threads: int) -> list[tuple[ir.Operation, Plan]]:
    """A plan per op; a row group's last consumer first takes its producers."""
    fused: set[ir.Operation] = set()
    grouped = {}
    for op in reversed(ops):
        if op.operation not in fused and (plan := fused_rows_plan(op, threads)) is not None:
            grouped[op.operation] = plan
            fused |= {member.operation for member in plan.members}
    planned = [(op, plan) for op in ops if op.operation not in fused
               and (plan := grouped.get(op.operation) or plan_for(op, threads)) is not None]
    for member in fused:            # after the lookups above: this edits the IR
        _own_empty_init(member)
    return planned


def _linalg_ops(module: ir.Operation) -> list[ir.Operation]:
    found = []
    for func in functions(module):
        found += [op for op in nested_ops(func) if op.name.startswith("linalg.")
                  and op.name != "linalg.yield" and op.parent.name != "linalg.generic"]
    return found


def _singles(item: tuple[ir.Operation, Plan], threads: int) -> list[tuple[ir.Operation, Plan]]:
    root, group = item
    return [(op, plan) for op in (*reversed(group.members), root)
            if (plan := plan_for(op, threads)) is not None]


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
           commit: bool = True) -> bool:
    """Schedule ``planned`` on a copy; on success (and ``commit``) keep the copy."""
    i64 = ir.IntegerType.get_signless(64, module.context)
    members = [member for _, plan in planned for member in plan.members]
    for index, (op, _) in enumerate(planned):
        op.attributes[_TAG] = ir.IntegerAttr.get(i64, index)
    for index, member in enumerate(members):
        member.attributes[_MEMBER_TAG] = ir.IntegerAttr.get(i64, index)
    copy = module.clone()
    for op, _ in planned:           # untag before the originals may be erased
        del op.attributes[_TAG]
    for member in members:
        del member.attributes[_MEMBER_TAG]
    if not _append_schedules(copy, [plan for _, plan in planned]) or not _interpret(copy):
        return False
    if commit:
        _replace_body(module, copy)
    return True


def _append_schedules(module: ir.Operation, plans: list[Plan]) -> bool:
    with module.context, ir.Location.unknown(module.context):
        text = (_HEADER + "\n" + _library_text(module.context) + _main_text(plans) + "\n}")
        try:
            parsed = ir.Module.parse(text)      # must outlive the moves below
        except ir.MLIRError as error:
            _report(f"the generated schedule does not parse: {error}")
            return False
        body = module.regions[0].blocks[0]
        for sequence in list(parsed.body.operations):
            body.append(sequence.operation)
        module.attributes[_LIBRARY_ATTR] = ir.UnitAttr.get()
    return True


_HEADER = "module attributes {transform.with_named_sequence} {"
_LIBRARY_CACHE: dict[int, str] = {}


def _library_text(context: ir.Context) -> str:
    """Every schedule file's named sequences (a file may call another's).

    Each file is one module opened by ``_HEADER``; its body is taken as text.
    """
    if not _LIBRARY_CACHE:
        bodies = []
        for path in sorted(SCHEDULES.glob("*.mlir")):
            source = path.read_text()
            bodies.append(source[source.index(_HEADER) + len(_HEADER):source.rindex("}")])
        _LIBRARY_CACHE[0] = "\n".join(bodies) + "\n"
    return _LIBRARY_CACHE[0]


def _main_text(plans: list[Plan]) -> str:
    lines = ["transform.named_sequence @__transform_main("
             "%root: !transform.any_op {transform.readonly}) {"]
    member = 0
    for index, plan in enumerate(plans):
        lines.append(f"  %op{index} = transform.structured.match attributes{{{_TAG} = {index} : i64}}"
                     " in %root : (!transform.any_op) -> !transform.any_op")
        args = [f"%op{index}"]
        if plan.members:            # one handle, in the plan's order (match gives program order)
            handles = []
            for _ in plan.members:
                handles.append(f"%m{member}")
                lines.append(f"  %m{member} = transform.structured.match attributes{{{_MEMBER_TAG} = "
                             f"{member} : i64}} in %root : (!transform.any_op) -> !transform.any_op")
                member += 1
            lines.append(f"  %group{index} = transform.merge_handles {', '.join(handles)}"
                         " : !transform.any_op")
            args.append(f"%group{index}")
        for k, value in enumerate(plan.params):
            lines.append(f"  %p{index}_{k} = transform.param.constant {value} : i64"
                         " -> !transform.param<i64>")
            args.append(f"%p{index}_{k}")
        types = ", ".join(["!transform.any_op"] * (2 if plan.members else 1)
                          + ["!transform.param<i64>"] * len(plan.params))
        lines.append(f"  transform.include @{plan.sequence} failures(propagate) "
                     f"({', '.join(args)}) : ({types}) -> ()")
    lines.append("  transform.include @xla_cleanup failures(propagate) (%root)"
                 " : (!transform.any_op) -> ()")
    lines.append("  transform.yield\n}")
    return "\n".join(lines)


def _interpret(module: ir.Operation) -> bool:
    """Run the interpreter; failure means 'keep the ops', so its diagnostics
    are held back unless $XLAC_SCHEDULE_ERRORS asks for them on stderr."""
    context = module.context
    held: list[str] = []
    handler = context.attach_diagnostic_handler(lambda d: held.append(f"{d.location}: {d.message}") or True)
    try:
        with context:
            pm = passmanager.PassManager.parse("builtin.module(transform-interpreter)")
            pm.run(module)
        return True
    except ir.MLIRError as error:
        _report(f"a schedule failed, its ops stay scalar: {error}", *held)
        return False
    finally:
        handler.detach()


def _report(*lines: str) -> None:
    if os.environ.get(ERRORS_ENV):
        print("xla-apply-schedules:", *lines, sep="\n", file=sys.stderr)


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
