"""``xlac.compile(..., target="cpu")``: the CPU pipeline, then the LLVM JIT."""

from __future__ import annotations

from xlac.collectives import program_grid
from xlac.cpu_model import cpu_model
from xlac.executable import Executable
from xlac.pipeline import pipelines
from xlac.signature import entry_signature
from xlac.targets.cpu.collectives import shim_for
from xlac.targets.cpu.library import executable_from
from xlac.targets.cpu.runtime import CpuFunction


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
        for stage in pipelines.CPU_STAGES[2:]:          # the stages after "stablehlo"
            runner.run(module, stage, steps[stage])
        features = cpu_model(options.cpu).features
        function = runner.machine_code(
            lambda: CpuFunction(module, entry, features, options.malloc_tuning, grid=grid,
                                mpi_library=mpi))
        stages.remarks = runner.remarks
        return Executable(function, signature, stages, "cpu", entry=entry)

    def deserialize(self, blob: bytes, what: str, entry: str, stages, options) -> Executable:
        return executable_from(blob, what, entry, stages, options)
