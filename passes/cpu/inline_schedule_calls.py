"""xla-inline-schedule-calls: each kernel xla-apply-schedules outlined back in place."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass
from xlac.passes.cpu.plans.schedule_functions import is_schedule_call
from xlac.passes.outline import inline_calls


@dataclass(frozen=True)
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
    """

    name = "xla-inline-schedule-calls"

    def run(self, module: ir.Operation) -> None:
        inline_calls(module, is_schedule_call)
