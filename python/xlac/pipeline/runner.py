"""Running a compile's stages: all at once, or pass by pass when the options
ask to dump, time or trace; the remarks kept; observers told what happened.

The runner knows nothing of files: what to do with each step's IR, the times
and a failure (dumps, reproducers, reports) is an ``Observer``'s business
(``xlac.debug.dump`` has the one ``xlac.compile`` uses).
"""

from __future__ import annotations

import os
import time
from typing import Protocol

from xlac.errors import CompileError, Diagnostic
from xlac.mlir import ir
from xlac.options import Options
from xlac.pipeline.pass_manager import run_passes
from xlac.pipeline.text import without_passes


def core_spare() -> bool:
    """Whether a core besides this compile's is likely idle, so that the function
    passes may run on MLIR's threads (``run_passes``' ``threads``): the last
    minute's load at least half a core below the CPUs this process may use.

    Why ask: on a busy machine a parallel pass waits at its end for the slowest
    thread, which waits for a core; measured on a 2-core machine at load 10,
    the threaded stages took 0-15% more wall for the same CPU. Idle, the
    function passes' 50-80 ms of CPU on a transformer split over two cores."""
    try:
        load = os.getloadavg()[0]
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    except OSError:
        return False
    return cpus > 1 and load <= cpus - 0.5      # the load counts this compile's own thread


class Observer(Protocol):
    """What a runner reports; every method may do nothing."""

    def started(self, module: ir.Module) -> None: ...
    def step_done(self, stage: str, step: str, module: ir.Module) -> None: ...
    def stage_done(self, stage: str, module: ir.Module) -> None: ...
    def failed(self, error: CompileError, runner: StageRunner) -> CompileError: ...
    def finished(self, runner: StageRunner) -> None: ...


class StageRunner:
    """Runs one compile's stages on a module, stage by stage."""

    def __init__(self, options: Options, observer: Observer | None = None,
                 progress=None, piece_cache=None):
        self.options = options
        self.observer = observer
        self.piece_cache = piece_cache     # where machine-code pieces are kept (xlac.cache.keys)
        self.progress = progress           # called with (stage, step, passes) as work starts;
        #                                    its close() when the compile ends or fails
        self.pipeline: list[str] = []      # every step run, in order
        self.times: list[tuple[str, str, float, float]] = []   # stage, step, start, seconds
        self.remarks: list[Diagnostic] = []
        self.failed_step = ""               # the step that failed, when run pass by pass
        self.lender = None                  # this compile's idle piece workers, lent to
        #                                     xla-apply-schedules (``run_passes``' lender)

    def start(self, module: ir.Module) -> None:
        if self.observer is not None:
            self.observer.started(module)

    def run(self, module: ir.Module, stage: str, steps: list[str], cut=None) -> None:
        """Run ``steps`` (minus the disabled passes) as stage ``stage``.

        ``cut``: ``(step, take)``, or a list of them in the steps' order: after
        ``step``, ``take(module, rest)`` may take the rest of the stage (True:
        the compiler runs it elsewhere, on parts of the module; False: it goes on
        here, ``take`` may only have looked). Offered only when nothing here needs
        the stage's module pass by pass (dumps, traces, timings, a progress bar,
        ``verify_each``)."""
        steps = without_passes(steps, self.options.disable_passes)
        self.pipeline += steps
        done = 0
        for at, take in self._cuts(steps, cut):
            if at <= done:
                continue
            self._run_steps(module, stage, steps[done:at], verify_after=False)
            done = at
            if take(module, steps[at:]):
                break
        else:
            self._run_steps(module, stage, steps[done:])
        if self.observer is not None:
            self.observer.stage_done(stage, module)

    def _cuts(self, steps: list[str], cut) -> list[tuple[int, object]]:
        """``cut``'s points (the index after each step) inside ``steps``, in order."""
        if cut is None or self._by_step() or self.options.verify_each:
            return []
        cuts = [cut] if isinstance(cut, tuple) else cut
        return sorted(((steps.index(step) + 1, take) for step, take in cuts
                       if step in steps and steps.index(step) + 1 < len(steps)), key=lambda c: c[0])

    def _by_step(self) -> bool:
        return self.options.stepwise or getattr(self.progress, "wants_steps", False)

    def _run_steps(self, module: ir.Module, stage: str, steps: list[str],
                   verify_after: bool = True) -> None:
        if self._by_step():
            for k, step in enumerate(steps):       # a bar counts passes: run them one by one
                last = k == len(steps) - 1
                self._timed(stage, step, lambda s=step, e=last: self._one_step(module, s, e))
                if self.observer is not None and self.options.stepwise:
                    self.observer.step_done(stage, step, module)
        else:
            self._timed(stage, stage, lambda: self.remarks.extend(
                run_passes(module, steps, verify_each=self.options.verify_each,
                           verify_after=verify_after, threads=core_spare(),
                           lender=self.lender)), len(steps))

    def machine_code(self, build, step: str = "llvm-jit (LLVM -O3)"):
        """``build()`` (the LLVM JIT, or PTX for cuda), timed and reported like a pass."""
        return self._timed("machine code", step, build)

    def finish(self) -> None:
        if self.progress is not None and hasattr(self.progress, "close"):
            self.progress.close()
        if self.observer is not None:
            self.observer.finished(self)

    def _one_step(self, module: ir.Module, step: str, stage_end: bool) -> None:
        """One pass; verified after it only at the stage's end (or with verify_each)."""
        try:
            self.remarks.extend(run_passes(module, [step], verify_each=self.options.verify_each,
                                           verify_after=stage_end, threads=core_spare(),
                                           lender=self.lender))
        except CompileError:
            self.failed_step = step
            raise

    def _timed(self, stage: str, name: str, action, passes: int = 1):
        if self.progress is not None:
            self.progress(stage, name, passes)
        start = time.perf_counter()
        try:
            result = action()
        except CompileError as error:
            self.times.append((stage, name + " (failed)", start, time.perf_counter() - start))
            self.finish()
            raise (self.observer.failed(error, self) if self.observer else error) from None
        self.times.append((stage, name, start, time.perf_counter() - start))
        return result
