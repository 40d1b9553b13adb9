"""The transform script xla-apply-schedules runs: the schedule library, a
generated ``@__transform_main`` handing each tagged op to its plan's named
sequence, and the interpreter that applies it; then the cleanup of the
scheduled module (``@xla_cleanup``), in an interpreter run of its own."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

from xlac.mlir import ir, passmanager, transform_interpreter
from xlac.passes.cpu.plans.schedule_plan import Plan

SCHEDULES = Path(__file__).parent.parent / "schedules"
CLEANUP = SCHEDULES / "common.mlir"     # @xla_cleanup: not in the library, see clean_up
PLANNED_TAG = "xla_schedule"            # op attribute the generated main matches on
MEMBER_TAG = "xla_schedule_member"      # ... and on the ops fused into a scheduled op
_LIBRARY_ATTR = "transform.with_named_sequence"


def append_schedules(module: ir.Operation, plans: list[Plan], order) -> str:
    """Put the schedules for ``plans`` into ``module``; why not, if they do not parse."""
    with module.context, ir.Location.unknown(module.context):
        text = (_HEADER + "\n" + library_text(plan.sequence for plan in plans)
                + _main_text(plans, *order) + "\n}")
        try:
            parsed = ir.Module.parse(text)      # must outlive the moves below
        except ir.MLIRError as error:
            return f"the generated schedule does not parse: {first_line(error)}"
        body = module.regions[0].blocks[0]
        for sequence in list(parsed.body.operations):
            body.append(sequence.operation)
        module.attributes[_LIBRARY_ATTR] = ir.UnitAttr.get()
    return ""


_HEADER = "module attributes {transform.with_named_sequence} {"
_SEQUENCE_START = re.compile(r"^  transform\.named_sequence @(\w+)\(", re.MULTILINE)
_INCLUDE = re.compile(r"transform\.include @(\w+)")


def library_text(sequences: Iterable[str]) -> str:
    """The named sequences ``sequences`` name and those they include, at any
    depth, in the library's order (a file may call another's).

    Why not the whole library: the interpreter's run and the script's parse
    grow with it, and a program uses a third of its ~80 sequences (ViT: 28;
    the whole library cost its run ~5% more, the parse ~4 ms)."""
    library = _library()
    needed, pending = set(), list(sequences)
    while pending:
        name = pending.pop()
        if name not in needed and name in library:     # unknown: the parse says so
            needed.add(name)
            pending += library[name][1]
    return "".join(text for name, (text, _) in library.items() if name in needed)


@functools.cache
def _library() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every schedule file's named sequences: name -> (its text, the names it
    includes), files in name order, each in its file's order.

    Each file is one module opened by ``_HEADER``, with its sequences at two
    spaces' indent; a sequence's text runs to the next one's (comments between
    them go with the one before)."""
    library = {}
    for path in sorted(SCHEDULES.glob("*.mlir")):
        if path == CLEANUP:
            continue
        source = path.read_text()
        body = source[source.index(_HEADER) + len(_HEADER):source.rindex("}")]
        starts = list(_SEQUENCE_START.finditer(body))
        for start, end in zip(starts, [*starts[1:], None]):
            text = body[start.start():end.start() if end else len(body)]
            library[start.group(1)] = (text.rstrip() + "\n", tuple(_INCLUDE.findall(text)))
    return library


def _main_text(plans: list[Plan], op_order: list[int], member_order: list[int]) -> str:
    """``@__transform_main``: every tagged op in one handle, split one per op,
    each given to its plan's sequence with its parameters."""
    lines = ["transform.named_sequence @__transform_main("
             "%root: !transform.any_op {transform.readonly}) {"]
    lines += _split_matches("op", PLANNED_TAG, len(plans))
    lines += _split_matches("m", MEMBER_TAG, len(member_order))
    member = 0
    for index, plan in enumerate(plans):
        args = [f"%op#{op_order[index]}"]
        if plan.members:            # one handle, in the plan's order (match gives program order)
            handles = []
            for _ in plan.members:
                handles.append(f"%m#{member_order[member]}")
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
    lines.append("  transform.yield\n}")
    return "\n".join(lines)


def _split_matches(name: str, tag: str, count: int) -> list[str]:
    """``%name#i``: the i-th op carrying ``tag``, matched once."""
    if not count:
        return []
    handle = "!transform.any_op"
    return [f"  %{name}_all = transform.structured.match attributes{{{tag}}} in %root"
            f" : ({handle}) -> {handle}",
            f"  %{name}:{count} = transform.split_handle %{name}_all : ({handle})"
            f" -> ({', '.join([handle] * count)})"]


# Without the expensive checks: they test every live handle against the ops
# each transform consumes, and every scheduled op has a handle, so they grow
# with the square of the program (measured on a 740-op program: 5.2 -> 4.5 s).
# They guard against schedules misusing handles; the schedules are fixed text
# and the tests run each of them.
_INTERPRETER = "builtin.module(transform-interpreter{disable-expensive-checks=true})"


def interpret(module: ir.Operation) -> str:
    """Run the interpreter; why it failed (failure means 'keep the ops'), or ""."""
    def run():
        passmanager.PassManager.parse(_INTERPRETER).run(module)
    return _why_not(module.context, run)


def clean_up(module: ir.Operation) -> str:
    """Take the schedules' transform IR out of ``module`` and apply
    ``@xla_cleanup`` to it whole; why that failed, or "".

    Why a run of its own: a transform may not rewrite the IR that holds it, so
    inside the schedules' run the cleanup could only be given each function,
    and ``apply_patterns`` builds its pattern sets once per op it is given
    (BERT's 36 kernel functions: the interpreter 0.17 -> 0.09 s).
    """
    body = module.regions[0].blocks[0]
    for op in list(body.operations):
        if op.operation.name.startswith("transform."):
            op.operation.erase()
    if _LIBRARY_ATTR in module.attributes:
        del module.attributes[_LIBRARY_ATTR]
    interpreter = transform_interpreter()

    def run():
        script = ir.Module.parse(_cleanup_text())
        options = interpreter.TransformOptions()
        options.expensive_checks = False        # as in _INTERPRETER
        interpreter.apply_named_sequence(module, script.body.operations[0].operation,
                                             script.operation, options)
    try:
        return _why_not(module.context, run)
    except ValueError as error:     # how these bindings fail: the diagnostics in the text
        said = [line for line in str(error).splitlines() if line.startswith("Diagnostic")]
        return said[0].split(": ", 1)[-1] if said else first_line(error)


@functools.cache
def _cleanup_text() -> str:
    return CLEANUP.read_text()


def _why_not(context: ir.Context, run) -> str:
    """``run()`` in ``context``; the first diagnostic if it raised, or ""."""
    held: list[str] = []
    handler = context.attach_diagnostic_handler(lambda d: held.append(str(d.message)) or True)
    try:
        with context, ir.Location.unknown(context):
            run()
        return ""
    except ir.MLIRError as error:
        if held:
            return held[0]
        said = [d.message for d in getattr(error, "error_diagnostics", [])]
        return said[0] if said else first_line(error)
    finally:
        handler.detach()


def first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
