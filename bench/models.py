"""Real models for ``run.py --models``: the six in ../shared/models and those that
``export_models.py`` wrote (default ``bench/models/``, gitignored).

A model is a ``Program`` of group "model" whose ``recipe`` says where its inputs come from:
("shared", NAME) for ../shared/models/make_inputs.py, ("npz", PATH) for the exported inputs;
``programs.make_inputs`` follows it (the xlac worker imports programs, not this module).
jaxlib's parser reads the signatures in the main process.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from programs import REPO, Program, extra_program

SHARED_MODELS = REPO.parent / "shared" / "models"
EXPORTS = REPO / "bench" / "models"
SEED_BASE = 200        # seed_index of the first model (the suite uses 0-9, extra files 100+)


def model_programs(exports: Path = EXPORTS, shared: Path = SHARED_MODELS) -> tuple[list[Program], list[str]]:
    """The real models found, shared ones first; and a line for each folder that has none."""
    found, notes = [], []
    if (shared / "make_inputs.py").exists():
        for path in sorted(shared.glob("*.mlir")):
            found.append((path, ("shared", path.stem)))
    else:
        notes.append(f"note: the shared models are not at {shared}: skipped")
    exported = sorted(p for p in exports.glob("*.mlir") if _npz(p).exists()) if exports.is_dir() else []
    if not exported:
        notes.append(f"note: no exported models in {exports}: run python bench/export_models.py "
                     "(pip install -e '.[models]') to add them")
    found += [(path, ("npz", str(_npz(path)))) for path in exported]
    programs = []
    for index, (path, recipe) in enumerate(found):
        program = extra_program(path, seed_index=SEED_BASE + index)
        programs.append(replace(program, group="model", recipe=recipe,
                                description=_description(path)))
    return programs, notes


def _npz(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".mlir") + ".inputs.npz")


def _description(path: Path) -> str:
    meta = path.with_name(path.name.removesuffix(".mlir") + ".json")
    try:
        return json.loads(meta.read_text()).get("description", "")
    except (OSError, ValueError):
        return ""
