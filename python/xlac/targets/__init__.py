"""Code generation and runtimes, one subpackage per target.

A target takes a parsed, not yet ingested module and turns it into an
``Executable`` through a ``StageRunner``; it also turns its executables into
bytes and back (the compilation cache and ``xlac.deserialize`` use that).
"""

from __future__ import annotations

import importlib

from xlac.errors import CompileError, error

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object             # Target is for type checkers and readers

_TARGETS = {"cpu": "xlac.targets.cpu.compile:CpuTarget",
            "cuda": "xlac.targets.cuda.compile:CudaTarget"}
TARGETS = tuple(_TARGETS)


class Target(Protocol):
    name: str

    def pipeline(self, entry: str, options) -> list[str]:
        """Every step of this target's pipeline (to check names, and for cache keys)."""

    def stage_names(self) -> list[str]: ...

    def compile(self, module, stages, entry: str, runner):
        """``module`` (parsed input) -> an Executable, its stages run by ``runner``."""

    def deserialize(self, blob: bytes, what: str, entry: str, stages, options):
        """An Executable from this target's bytes (``Executable.serialize()``)."""


def get_target(name: str) -> Target:
    """The target called ``name``; a CompileError naming the known ones otherwise."""
    if name not in _TARGETS:
        raise CompileError(error(f"unknown target '{name}'"), f"targets: {', '.join(TARGETS)}")
    module_name, class_name = _TARGETS[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)()
