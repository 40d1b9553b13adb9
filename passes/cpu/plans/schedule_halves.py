"""xla-apply-schedules' interpreter and ``@xla_cleanup`` on two halves of the
kernels at once: one half in this process, the other in an idle piece worker.

Why: the interpreter and the cleanup are the pass's largest part (77-125 ms of
CPU on the transformers and ResNets), run while the second core idles, and
they are per function once the planned ops are in kernels of their own
(``outline_planned``): every transform acts inside one function, the cleanup's
patterns and CSE are function-local, its loops' hoisting is per loop. Each
half is the module with the other half's functions made private declarations
(calls stay valid, nothing of theirs is walked), the schedules of its own
ops appended; the scheduled functions are put back in the module's order, so
the module is the one the whole run gives (22 of 22 programs, text
identical, at host level and x86-64-v3; docs/compile-time.md).

The worker only runs ``interpret`` and ``clean_up`` on the bytecode it is
given (``piece_worker``): the plans and the script are made here. Any failure
(a schedule that does not apply, a worker that died) gives None and the
caller runs the module whole, as without a worker, so the remarks and the
fallbacks are those of the whole run.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from xlac.mlir import ir
from xlac.passes.base import functions, nested_ops, post_order_positions, symbol_name
from xlac.passes.cpu.plans.schedule_functions import is_kernel
from xlac.passes.cpu.plans.schedule_script import MEMBER_TAG, PLANNED_TAG, append_schedules, clean_up, interpret

MIN_KERNELS = 8     # fewer: the round trip (~10 ms) is more than half the work

# () -> a lent worker (``send(bytecode)``, then ``receive() -> (bytecode, why)``) or
# None. A compile's runner gives it to the passes it runs (``run_passes(lender=)``,
# set by the CPU target's ``schedule_worker``): the passes do not know workers, and
# only the compile that started the workers lends them; the next one does not.
Lender = Callable[[], object | None]
_lender: ContextVar[Lender | None] = ContextVar("xla_apply_schedules_lender", default=None)


@contextmanager
def lent_workers(lender: Lender | None) -> Iterator[None]:
    """Inside the block, xla-apply-schedules may borrow workers from ``lender``
    (None: it runs whole); outside, whatever lent before."""
    token = _lender.set(lender)
    try:
        yield
    finally:
        _lender.reset(token)


def applied_in_halves(module: ir.Operation, planned: list) -> bool | None:
    """``planned`` scheduled and cleaned up in two halves, one on a worker, and
    committed to ``module``: True; None where that cannot be (no worker, too
    few kernels, a group outside one function) or did not apply."""
    lender = _lender.get()
    halves = _halves(module, planned) if lender is not None else None
    worker = lender() if halves is not None else None
    if worker is None:
        return None
    group_of, plans_of = halves
    worker.send(_bytecode(_scheduled_half(module, plans_of[1], group_of, 1)))
    here = _scheduled_half(module, plans_of[0], group_of, 0)
    why = interpret(here) or clean_up(here)
    there, worker_why = worker.receive()     # always: the worker serves the next request
    if why or worker_why:
        return None
    _put_back(module, here, ir.Module.parse(there, module.context).operation, group_of)
    return True


def _halves(module: ir.Operation, planned: list) -> tuple[dict, list[list]] | None:
    """Each function's half (0 or 1), kernels balanced by op count, largest
    first; every other function in half 0. And the plans of each half."""
    bodies = [f for f in functions(module) if f.regions[0].blocks]
    kernels = [f for f in bodies if is_kernel(f)]
    if len(kernels) < MIN_KERNELS:
        return None
    group_of = {symbol_name(f): 0 for f in bodies}
    size = [0, 0]
    for count, name in sorted(((len(nested_ops(f)), symbol_name(f)) for f in kernels), key=lambda k: -k[0]):
        half = 0 if size[0] <= size[1] else 1
        group_of[name] = half
        size[half] += count
    plans_of: list[list] = [[], []]
    for op, plan in planned:
        names = {symbol_name(_function(o.operation)) for o in (op, *plan.members)}
        if len(names) != 1:
            return None
        plans_of[group_of[names.pop()]].append((op, plan))
    return (group_of, plans_of) if plans_of[1] else None


def _scheduled_half(module: ir.Operation, planned: list, group_of: dict, half: int) -> ir.Operation:
    """A copy of ``module`` whose functions of the other half are declarations,
    with the schedules of ``planned`` appended (``_apply``'s tags and order)."""
    members = [member for _, plan in planned for member in plan.members]
    order = (post_order_positions(module, {op.operation: i for i, (op, _) in enumerate(planned)}),
             post_order_positions(module, {m.operation: i for i, m in enumerate(members)}))
    unit = ir.UnitAttr.get(module.context)
    for op, _ in planned:
        op.attributes[PLANNED_TAG] = unit
    for member in members:
        member.attributes[MEMBER_TAG] = unit
    copy = module.clone()
    for op, _ in planned:
        del op.attributes[PLANNED_TAG]
    for member in members:
        del member.attributes[MEMBER_TAG]
    for function in functions(copy):
        if function.regions[0].blocks and group_of.get(symbol_name(function)) != half:
            _declare(function)
    append_schedules(copy, [plan for _, plan in planned], order)
    return copy


def _declare(function: ir.Operation) -> None:
    """Replace ``function`` by a private declaration of it."""
    with function.context, ir.Location.unknown(function.context):
        ir.Operation.create("func.func", regions=1, ip=ir.InsertionPoint(function), attributes={
            "sym_name": function.attributes["sym_name"],
            "function_type": function.attributes["function_type"],
            "sym_visibility": ir.StringAttr.get("private")})
    function.erase()


def _put_back(module: ir.Operation, here: ir.Operation, there: ir.Operation, group_of: dict) -> None:
    """``module``'s body made of ``here``'s top-level ops (half 0's, in the
    module's order) with half 1's functions taken from ``there``."""
    theirs = {symbol_name(f): f for f in functions(there)
              if f.regions[0].blocks and group_of.get(symbol_name(f)) == 1}
    body = module.regions[0].blocks[0]
    for op in list(body.operations):
        op.operation.erase()
    for op in [op.operation for op in here.regions[0].blocks[0].operations]:
        name = symbol_name(op) if op.name == "func.func" else None
        body.append(theirs.get(name, op))
    for op in nested_ops(module):
        for tag in (PLANNED_TAG, MEMBER_TAG):
            if tag in op.attributes:
                del op.attributes[tag]


def _bytecode(module: ir.Operation) -> bytes:
    buffer = io.BytesIO()
    module.write_bytecode(buffer)
    return buffer.getvalue()


def _function(op: ir.Operation) -> ir.Operation:
    while op.name != "func.func":
        op = op.parent
    return op
