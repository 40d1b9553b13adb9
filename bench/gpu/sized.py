"""The programs of ``run.py --target cuda --gpu-sized``: what bench/export_gpu_sized.py wrote.

Each is a ``SizedProgram``: a Program whose inputs are drawn from its JSON (recipe
"drawn": a weight's mean and spread, token ids in range) and that names the peak that
bounds it (gpu/roofline.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from programs import REPO, Program, TensorSpec

from gpu.roofline import TOLERANCE

EXPORTS = REPO / "bench" / "gpu_sized"
SEED_BASE = 300        # seed_index of the first program (suite 0-9, extra files 100+, models 200+)


@dataclass(frozen=True)
class SizedProgram(Program):
    peak: str = "hbm"          # a key of gpu/roofline.PEAKS
    scale: float = 1.0         # the export's factor on every size

    @property
    def tolerance(self) -> float | None:
        """The check's own limit where XLA's arithmetic is looser than the output type's."""
        return TOLERANCE.get(self.peak)


def sized_programs(folder: Path = EXPORTS) -> list[Program]:
    """Every exported program in the folder, in the export script's order; an empty list
    when there is none (the caller says how to make them)."""
    if not folder.is_dir():
        return []
    metas = [json.loads(path.read_text()) for path in folder.glob("*.json")
             if path.with_suffix(".mlir").exists()]
    metas.sort(key=lambda m: (m.get("order", len(metas)), m["name"]))
    return [_program(folder, meta, SEED_BASE + index) for index, meta in enumerate(metas)]


def _program(folder: Path, meta: dict, seed_index: int) -> SizedProgram:
    name = meta["name"]
    return SizedProgram(
        name=name, path=folder / f"{name}.mlir",
        inputs=tuple(_spec(s) for s in meta["inputs"]), outputs=tuple(_spec(s) for s in meta["outputs"]),
        seed_index=seed_index, flops=meta.get("flops"), in_suite=False, group="gpu-sized",
        recipe=("drawn", str(folder / f"{name}.json")), description=meta.get("description", ""),
        peak=meta["peak"], scale=float(meta.get("scale", 1.0)))


def _spec(entry: dict) -> TensorSpec:
    return TensorSpec(tuple(entry["shape"]), entry["dtype"])
