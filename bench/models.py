"""Real models for ``run.py --models``: the six in ../shared/models and those that
``export_models.py`` wrote (default ``bench/models/``, gitignored).

A model is a ``Program`` of group "model" whose ``recipe`` says where its inputs come from:
("shared", NAME) calls ../shared/models/make_inputs.py's ``inputs(NAME, seed)``;
("npz", PATH) loads the exported inputs (keys sorted = argument order). Imported by the
xlac worker too (``make_inputs``), so it needs numpy only; jaxlib's parser reads the
signatures in the main process.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
from programs import REPO, Program, extra_program, to_dtype

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


def recipe_inputs(program: Program, seed: int) -> list[np.ndarray]:
    """The model's arguments, in order, as contiguous numpy arrays."""
    kind, where = program.recipe
    if kind == "shared":
        arrays = _shared_make_inputs(Path(program.path).parent).inputs(where, seed)
    elif kind == "npz":
        with np.load(where) as saved:
            arrays = [saved[key] for key in sorted(saved.files)]
    else:
        raise ValueError(f"{program.name}: unknown input recipe {kind!r}")
    if len(arrays) != len(program.inputs):
        raise ValueError(f"{program.name}: the recipe gives {len(arrays)} inputs, "
                         f"@main takes {len(program.inputs)}")
    # in the program's element types (bf16 is saved as f32); ascontiguousarray makes 0-d 1-d
    return [np.asarray(a, order="C").astype(to_dtype(spec.dtype), copy=False)
            for a, spec in zip(arrays, program.inputs)]


_LOADED: dict[Path, object] = {}


def _shared_make_inputs(folder: Path):
    """../shared/models/make_inputs.py as a module (it is not a package)."""
    if folder not in _LOADED:
        spec = importlib.util.spec_from_file_location("shared_make_inputs", folder / "make_inputs.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED[folder] = module
    return _LOADED[folder]
