"""Code generation and runtimes, one folder per target, each described by a
table of stages (``xlac.targets.target.Target``).

Adding a target is a folder and one line here: its name and where its table
is. Tables are imported on first use.
"""

from __future__ import annotations

import importlib

from xlac.errors import CompileError, error

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from xlac.targets.target import Target

# target name -> "module:TABLE"
_TARGETS = {"cpu": "xlac.targets.cpu.target:CPU",
            "cuda": "xlac.targets.cuda.target:CUDA",
            "reference": "xlac.targets.reference.target:REFERENCE"}
TARGETS = tuple(_TARGETS)


def get_target(name: str) -> Target:
    """The target called ``name``; a CompileError naming the known ones otherwise."""
    if name not in _TARGETS:
        raise CompileError(error(f"unknown target '{name}'"), f"targets: {', '.join(TARGETS)}")
    module_name, table = _TARGETS[name].split(":")
    return getattr(importlib.import_module(module_name), table)
