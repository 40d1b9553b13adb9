"""``xlac.compile(..., target="cpu")``: the CPU pipeline, then the LLVM JIT."""

from __future__ import annotations

import json

from xlac.collectives import program_grid
from xlac.cpu_model import cpu_model
from xlac.executable import Executable
from xlac.pipeline import pipelines
from xlac.signature import entry_signature
from xlac.targets.cpu import pieces
from xlac.targets.cpu.collectives import shim_for
from xlac.targets.cpu.libraries import keep_freed_memory
from xlac.targets.cpu.library import executable_from
from xlac.targets.cpu.runtime import CpuFunction
from xlac.targets.cpu.serialize import WrapperObject


class CpuTarget:
    name = "cpu"

    def pipeline(self, entry: str, options) -> list[str]:
        return [step for steps in pipelines.cpu_stages(entry, options).values() for step in steps]

    def stage_names(self) -> list[str]:
        return list(pipelines.CPU_STAGES)

    def compile(self, module, stages, entry: str, runner) -> Executable:
        options = runner.options
        grid = program_grid(module.operation)
        mpi = shim_for(options) if grid else None      # its calls resolve in the JIT
        steps = pipelines.cpu_stages(entry, options)
        runner.run(module, "stablehlo", steps["stablehlo"])
        signature = entry_signature(module, entry)
        wrapper = None
        if _may_split(options, grid) and pieces.likely_big(module):
            pieces.start_workers(max(1, options.threads()))   # their imports overlap the passes
            wrapper = WrapperObject("xlac", entry, signature, pieces.LIBRARY_ORIGIN)   # ... its C compile too
        for stage in pipelines.CPU_STAGES[2:]:          # the stages after "stablehlo"
            runner.run(module, stage, steps[stage])
        features = cpu_model(options.cpu).features
        function = _in_pieces(module, entry, signature, features, runner, grid, wrapper) or \
            runner.machine_code(lambda: CpuFunction(module, entry, features,
                                                    options.malloc_tuning, grid=grid,
                                                    mpi_library=mpi))
        stages.remarks = runner.remarks
        return Executable(function, signature, stages, "cpu", entry=entry)

    def deserialize(self, blob: bytes, what: str, entry: str, stages, options) -> Executable:
        return executable_from(blob, what, entry, stages, options)


def _may_split(options, grid) -> bool:
    return options.pieces and grid is None and not options.profile


def _in_pieces(module, entry: str, signature, features, runner, grid, wrapper=None):
    """The program compiled in pieces on every core, or None: small, SPMD,
    profiled (its clock lives in the JIT) or ``options.pieces`` off."""
    options = runner.options
    if not _may_split(options, grid):
        return None
    texts = pieces.function_texts(module, entry)      # None: small, or cannot be split
    if texts is None:
        return None
    workers = max(1, options.threads())
    found = runner.machine_code(lambda: pieces.split(module, entry, 4 * workers, texts),
                                "split into pieces")
    from xlac.artifact.identity import build_identity
    from xlac.cache import CompilationCache
    keep_freed_memory(options.malloc_tuning)
    salt = json.dumps([build_identity(options.cache_dir), sorted(features)], sort_keys=True)
    cache = CompilationCache.open(options.cache_dir)
    return runner.machine_code(
        lambda: pieces.PiecesFunction(found, entry, signature, features, workers, cache, salt,
                                      wrapper),
        f"LLVM -O3, {len(found)} pieces on {min(workers, len(found))} processes")
