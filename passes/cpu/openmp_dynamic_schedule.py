"""xla-openmp-dynamic-schedule: parallel loops hand out chunks on demand."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class OpenmpDynamicSchedule(ModulePass):
    """Set `schedule(dynamic)` on every `omp.wsloop` (after convert-scf-to-openmp).

    Why: the schedules cut parallel loops into a few chunks per thread. With
    the default static schedule each thread owns a fixed share, so on a
    machine shared with other jobs one descheduled thread holds up the
    whole region; dynamic lets the threads that run take the chunks left.
    Upstream convert-scf-to-openmp has no option for the schedule.

    Example:
        omp.wsloop { omp.loop_nest ... }
    becomes
        omp.wsloop schedule(dynamic) { omp.loop_nest ... }
    """

    name = "xla-openmp-dynamic-schedule"

    def run(self, module: ir.Operation) -> None:
        dynamic = ir.Attribute.parse("#omp<schedulekind dynamic>", module.context)
        for op in module_ops(module):
            if op.name == "omp.wsloop" and "schedule_kind" not in op.attributes:
                op.attributes["schedule_kind"] = dynamic
