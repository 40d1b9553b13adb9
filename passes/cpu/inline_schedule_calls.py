"""xla-inline-schedule-calls: each kernel xla-apply-schedules outlined back in place."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops, public_definitions, symbol_name
from xlac.passes.base import functions as functions_of
from xlac.passes.cpu.kernel_repeats import REPEAT, repeatable
from xlac.passes.cpu.plans.schedule_functions import is_schedule_call
from xlac.passes.outline import inline_calls
from xlac.record import record


@record
class InlineScheduleCalls(ModulePass):
    """Replace each call of an `@xla_scheduled_<n>` function (the kernels
    xla-apply-schedules outlines, one function per distinct kernel, kept
    through bufferization) by a copy of its body, its ops located at the
    call; erase the functions.

    Why here and not by upstream `inline`: the copies take their call's
    location, so a profile, a remark or the fusion report names each layer's
    kernel by its own source line (upstream's keeps the function's, the first
    layer's, for all). xla-outline-kernels then makes one LLVM function per
    distinct kernel again, on the bufferized code.

        call @xla_scheduled_0(%buf, %a) : (memref<8xf32>, memref<8xf32>) -> ()  loc("m.mlir":4:3)
      becomes the function's loops over %buf and %a, located at m.mlir:4:3.

    With ``leave-repeats`` (the CPU pipeline's), the calls of a function
    called more than once whose body xla-outline-kernels outlines whole
    (``kernel_repeats.repeatable``), at the top of a public function, stay
    calls for it: it copies the body in only at the first call of each kind
    and calls that kernel from the others, the module it makes the same.
    """

    name = "xla-inline-schedule-calls"
    # leave the calls of a function called more than once, at the top of a
    # public function, for xla-outline-kernels (``kernel_repeats``): set where it follows
    leave_repeats: bool = False

    def run(self, module: ir.Operation) -> None:
        if self.leave_repeats:
            _leave_repeats(module)
        inline_calls(module, lambda call: is_schedule_call(call) and REPEAT not in call.attributes)


def _leave_repeats(module: ir.Operation) -> None:
    """The calls left (marked ``REPEAT`` and ``no_inline``): those of a function
    ``repeatable`` says may be, called more than once, each from a public
    function's entry block, where xla-outline-kernels looks for kernels."""
    functions = {symbol_name(f): f for f in functions_of(module)}
    defined = {name for name, f in functions.items() if f.regions[0].blocks}
    calls: dict[str, list[ir.Operation]] = {}
    for op in nested_ops(module):
        if op.name == "func.call":
            calls.setdefault(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, []).append(op)
    tops = {func.regions[0].blocks[0] for func in public_definitions(module)}
    left = []
    for name, each in calls.items():
        if len(each) > 1 and name in functions and is_schedule_call(each[0]) \
                and repeatable(functions[name], defined):
            left += [call for call in each if call.block in tops]
    for call in left:
        call.attributes[REPEAT] = ir.UnitAttr.get()
        call.attributes["no_inline"] = ir.UnitAttr.get()    # for the inliner that follows
