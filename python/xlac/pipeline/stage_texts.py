"""The IR of a program at each named stage, made on request.

Compilation is deterministic, so rather than printing every stage on every
compile (slow for big constants), a stage is re-derived from the input when
someone asks for it, and remembered.
"""

from __future__ import annotations

from xlac.errors import CompileError, Diagnostic, error
from xlac.options import Options
from xlac.pipeline import pipelines

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:                 # parsing loads the bindings; a cache hit needs none
    from xlac.mlir import ir


class StageTexts:
    """The CPU pipeline's stages of one program (``Executable.as_text``)."""

    def __init__(self, data: bytes, source_name: str, entry: str, options: Options):
        self._data = data
        self._source_name = source_name
        self._entry = entry
        self._options = options
        self._texts: dict[str, str] = {}
        self._remarks: list[Diagnostic] | None = None

    @property
    def remarks(self) -> list[Diagnostic]:
        """What the compile said (ops left as scalar loops, ...): kept from the compile,
        or derived again (after a cache hit) by running the pipeline up to "llvm"."""
        if self._remarks is None:
            self._remarks = self._run_until("llvm")[1]
        return self._remarks

    @remarks.setter
    def remarks(self, value: list[Diagnostic]) -> None:
        self._remarks = list(value)

    def names(self) -> list[str]:
        return list(pipelines.CPU_STAGES)

    def text(self, stage: str) -> str:
        if stage not in pipelines.CPU_STAGES:
            raise CompileError(error(f"no stage '{stage}'"), f"stages: {', '.join(self.names())}")
        if stage not in self._texts:
            self._texts[stage] = str(self.module(stage))
        return self._texts[stage]

    def module(self, stage: str) -> ir.Module:
        """A fresh ``ir.Module`` at ``stage``, with its source locations (for analyses)."""
        return self._run_until(stage)[0]

    def _run_until(self, stage: str) -> tuple[ir.Module, list[Diagnostic]]:
        from xlac.context import new_context
        from xlac.frontend.parse import parse_module
        from xlac.pipeline.pass_manager import run_passes
        from xlac.pipeline.text import without_passes
        module = parse_module(new_context(), self._data, self._source_name)
        steps = pipelines.steps_until(stage, self._entry, self._options)
        return module, run_passes(module, without_passes(steps, self._options.disable_passes))
