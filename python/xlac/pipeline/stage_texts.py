"""The IR of a program at each named stage, made on request.

Compilation is deterministic, so rather than printing every stage on every
compile (slow for big constants), a stage is re-derived from the input when
someone asks for it, and remembered.
"""

from __future__ import annotations

from xlac.pipeline import pipelines
from xlac.errors import CompileError
from xlac.frontend.parse import parse_module
from xlac.mlir import new_context
from xlac.pipeline.pass_manager import run_passes


class StageTexts:
    def __init__(self, data: bytes, source_name: str, entry: str,
                 disabled: frozenset[str] = frozenset()):
        self._data = data
        self._source_name = source_name
        self._entry = entry
        self._disabled = disabled
        self._texts: dict[str, str] = {}

    def names(self) -> list[str]:
        return list(pipelines.CPU_STAGES)

    def text(self, stage: str) -> str:
        if stage not in pipelines.CPU_STAGES:
            raise CompileError(f"<unknown>: error: no stage '{stage}'",
                               f"stages: {', '.join(self.names())}")
        if stage not in self._texts:
            self._texts[stage] = str(self.module(stage))
        return self._texts[stage]

    def module(self, stage: str):
        """A fresh ``ir.Module`` at ``stage``, with its source locations (for analyses)."""
        module = parse_module(new_context(), self._data, self._source_name)
        run_passes(module, pipelines.steps_until(stage, self._entry), disabled=self._disabled)
        return module
