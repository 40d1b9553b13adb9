"""The CPU target's machine code: the LLVM dialect JIT-compiled in this
process, or, for a big program, compiled in pieces by one worker process per
core and linked into the library it then runs from (``pieces``). A big
program's pieces are cut right after ``xla-outline-kernels`` and lowered to
the LLVM dialect by their workers (``early_pieces``) unless the compile must
see the whole llvm stage here (then they are cut from its LLVM dialect)."""

from __future__ import annotations

from xlac.cpu_model import cpu_model
from xlac.pipeline.handoffs import printed_kernels
from xlac.spmd.mpi import shim_for
from xlac.targets.cpu import early_pieces, pieces
from xlac.targets.cpu.constants import has_constants, take_constants
from xlac.targets.cpu.kernel_builds import build_ahead, library_cold
from xlac.targets.cpu.libraries import cores_busy_elsewhere, keep_freed_memory
from xlac.targets.cpu.pipeline import KERNELS_CALLED
from xlac.targets.cpu.runtime import CpuFunction
from xlac.targets.cpu.schedule_worker import lend
from xlac.targets.cpu.serialize import WrapperObject


class CpuCompiler:
    """Machine code for one compile (``Target.compile`` drives it)."""

    def __init__(self, options, grid):
        self.options = options
        self.grid = grid                   # an SPMD program's device grid (None: one device)
        self.mpi = shim_for(options) if grid else None      # its calls resolve in the JIT
        self.wrapper = None
        self.early = None                  # (function texts, steps): the llvm stage's rest, in pieces
        self.kernel_worker = False         # a small program's worker, for its micro-kernels alone

    def ingested(self, module, entry: str, signature, runner) -> None:
        """A big program: start the piece workers now, their imports and the
        C wrapper's compile overlap the passes, which leave the second core idle.
        A small one that will build micro-kernels, where a core is idle: one
        worker, for them (its start costs 2-3x their builds' CPU, on that core)."""
        if not self._may_split():
            return
        if pieces.likely_big(module):
            pieces.start_workers(max(1, self.options.threads()))
            runner.lender = lend                 # this compile's passes only: the next starts its own
            self.wrapper = WrapperObject("xlac", entry, signature, pieces.LIBRARY_ORIGIN)
        elif self._calls_kernels() and library_cold(module, self._features(), self.options.cache_dir) \
                and not cores_busy_elsewhere():      # else the worker's start costs more than the builds
            pieces.start_workers(1)
            self.kernel_worker = True

    def stage_cut(self, stage: str, entry: str):
        """The llvm stage's rest after outlining, taken to run in the piece workers
        (``StageRunner.run``'s ``cut``), and before it a look after the micro-kernel
        calls: the kernels the cache lacks built meanwhile on an idle worker
        (``kernel_builds``); None where the program stays whole and builds none ahead."""
        if stage != "llvm" or (self.wrapper is None and not self.kernel_worker):
            return None                                  # likely small: no worker started

        def build_kernels(module, steps: list[str]) -> bool:
            build_ahead(module, self._features(), self.options.cache_dir)
            return False                                 # the stage goes on here
        if self.wrapper is None:                         # small: the stage stays whole
            return [(KERNELS_CALLED, build_kernels)]

        def take(module, steps: list[str]) -> bool:
            texts = early_pieces.function_texts(module, entry)
            self.early = (texts, steps) if texts is not None else None
            return texts is not None
        return [(KERNELS_CALLED, build_kernels), (early_pieces.CUT_AFTER, take)]

    def machine_code(self, module, entry: str, signature, kept: dict, runner):
        printed_kernels(module.operation)                 # not taken at a cut: none kept past the compile
        features = cpu_model(self.options.cpu).features
        constants = runner.machine_code(lambda: take_constants(module), "the constants' bytes") \
            if has_constants(module) else ()              # no span for nothing
        return self._in_pieces(module, entry, signature, features, constants, runner) or \
            runner.machine_code(lambda: CpuFunction(module, entry, features,
                                                    self.options.malloc_tuning, grid=self.grid,
                                                    mpi_library=self.mpi, constants=constants,
                                                    cache_dir=self.options.cache_dir))

    def _features(self) -> tuple[str, ...]:
        return cpu_model(self.options.cpu).features

    def _calls_kernels(self) -> bool:
        """Whether the llvm stage may call micro-kernels (``llvm_stage``'s test)."""
        return self.options.micro_kernels and "fma" in self._features()

    def _may_split(self) -> bool:
        return self.options.pieces and self.grid is None and not self.options.profile

    def _in_pieces(self, module, entry: str, signature, features, constants, runner):
        """The program compiled in pieces on every core, or None: small, SPMD,
        profiled (its clock lives in the JIT) or ``options.pieces`` off."""
        if not self._may_split():
            return None
        workers = max(1, self.options.threads())
        if self.early is not None:                        # to be lowered by the workers
            texts, steps = self.early
            # made while the first are compiled: the split no longer waits for the workers
            count, found = early_pieces.made_largest_first(module, entry, 4 * workers, texts,
                                                           steps, len(constants))
        else:
            texts = pieces.function_texts(module, entry)  # None: small, or cannot be split
            if texts is None:
                return None
            found = runner.machine_code(lambda: pieces.split(module, entry, 4 * workers, texts),
                                        "split into pieces")
            count = len(found)
        keep_freed_memory(self.options.malloc_tuning)
        return runner.machine_code(
            lambda: pieces.PiecesFunction(found, entry, signature, features, workers,
                                          runner.piece_cache, self.wrapper, constants,
                                          self.options.cache_dir),
            f"LLVM -O3, {count} pieces on {min(workers, count)} processes")
