"""The IR of a program at each named stage of its target, made on request.

Compilation is deterministic, so rather than printing every stage on every
compile (slow for big constants), a stage is made again from the input when
someone asks for it, and remembered. The texts a target keeps with its code
(CUDA's kernels and PTX: ``Stage.kept``) are handed over by the compile, or
by the loader after a cache hit, and never made again.
"""

from __future__ import annotations

from xlac.errors import Diagnostic
from xlac.options import Options

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:                 # parsing loads the bindings; a cache hit needs none
    from xlac.mlir import ir


class StageTexts:
    """The stages of one program on ``target`` (an ``xlac.targets.target.Target``:
    its table says what each stage is), for ``Executable.as_text``."""

    def __init__(self, target, data: bytes, source_name: str, entry: str,
                 options: Options):
        self._target = target
        self._data = data
        self._source_name = source_name
        self._entry = entry
        self._options = options
        self._texts: dict[str, str] = {}
        self._remarks: list[Diagnostic] | None = None

    @property
    def remarks(self) -> list[Diagnostic]:
        """What the compile said (ops left as scalar loops, ...): kept from the compile,
        or derived again (after a cache hit) by running every pass stage."""
        if self._remarks is None:
            self._remarks = self._run_until(self._target.pass_stages()[-1].name)[1]
        return self._remarks

    @remarks.setter
    def remarks(self, value: list[Diagnostic]) -> None:
        self._remarks = list(value)

    def keep(self, texts: dict[str, str]) -> None:
        """Stage texts that came with the code: returned as they are."""
        self._texts.update(texts)

    def names(self) -> list[str]:
        return self._target.stage_names()

    def text(self, stage: str) -> str:
        if stage not in self._texts:
            if self._target.stage(stage).code:
                self._texts[stage] = self._target.code_text(stage, self.module(stage))
            else:
                self._texts[stage] = str(self.module(stage))
        return self._texts[stage]

    def module(self, stage: str) -> ir.Module:
        """A fresh ``ir.Module`` at ``stage`` (at a code stage: the module its text is
        made from), with its source locations (for analyses)."""
        return self._run_until(stage)[0]

    def _run_until(self, stage: str) -> tuple[ir.Module, list[Diagnostic]]:
        from xlac.context import new_context
        from xlac.frontend.parse import parse_module
        from xlac.pipeline.pass_manager import run_passes
        from xlac.pipeline.text import without_passes
        steps = self._target.steps_until(stage, self._entry, self._options)
        module = parse_module(new_context(), self._data, self._source_name)
        return module, run_passes(module, without_passes(steps, self._options.disable_passes))
