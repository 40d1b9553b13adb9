#!/usr/bin/env python
"""Export the benchmark's own real models to StableHLO text, from pip packages.

    pip install -e '.[bench,models]'              # jax, flax, torch (CPU build: see bench/README.md)
    python bench/export_models.py                 # every model, into bench/models/ (gitignored)
    python bench/export_models.py --only torch_lstm,jax_shallow_water --force
    python bench/export_models.py --list

Each model NAME becomes NAME.mlir (the frontend's text, unchanged), NAME.inputs.npz (every
argument of @main, weights first, keys in argument order) and NAME.json (what it is, its
signature, the versions that made it). Weights are seeded random draws, so a re-export
gives the same files. Each model is exported in a process of its own (torch-mlir and
jaxlib each bring their MLIR). ``run.py --models`` picks them up.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "models"

# name -> (its module in zoo/, frontend)
MODELS = {
    "torch_mobilenet_v2": ("torch_models", "torch-mlir fx (torch.export -> StableHLO)"),
    "torch_lstm": ("torch_models", "torch-mlir fx (torch.export -> StableHLO)"),
    "torch_transformer": ("torch_models", "torch-mlir fx (torch.export -> StableHLO)"),
    "flax_unet_block": ("jax_models", "flax.linen (jax.jit(...).lower().as_text())"),
    "flax_lstm_scan": ("jax_models", "flax.linen (jax.jit(...).lower().as_text())"),
    "jax_shallow_water": ("jax_models", "jax.numpy (jax.jit(...).lower().as_text())"),
}
PACKAGES = ("numpy", "jax", "jaxlib", "flax", "torch", "torch-mlir")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"where the files go (default {DEFAULT_OUT})")
    parser.add_argument("--only", help="comma-separated model names")
    parser.add_argument("--force", action="store_true", help="export again what is already there")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--one", help=argparse.SUPPRESS)      # the child process's model
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.list:
        for name, (_module, frontend) in MODELS.items():
            print(f"{name:20} {frontend}")
        return 0
    if args.one:
        return export_one(args.one, args.out)
    names = [n.strip() for n in args.only.split(",")] if args.only else list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"error: no model named {', '.join(unknown)}; have: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in names:
        if not args.force and all((args.out / f"{name}{s}").exists() for s in (".mlir", ".inputs.npz", ".json")):
            print(f"{name}: already in {args.out} (--force exports it again)")
            continue
        code = subprocess.call([sys.executable, __file__, "--one", name, "--out", str(args.out)])
        if code != 0:
            failed.append(name)
    if failed:
        print(f"error: not exported: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def export_one(name: str, out: Path) -> int:
    """In the child: build, lower and write one model."""
    import warnings

    import numpy as np
    sys.path.insert(0, str(HERE))             # zoo/ as a package
    warnings.simplefilter("ignore")          # torch.export's and flax's deprecation chatter
    module, frontend = MODELS[name]
    start = time.perf_counter()
    try:
        zoo = importlib.import_module(f"zoo.{module}")
        text, arrays, description, parameters = zoo.export(name)
    except ImportError as exc:
        print(f"{name}: cannot export: {exc} (pip install -e '.[bench,models]')", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - start
    (out / f"{name}.mlir").write_text(text)
    np.savez(out / f"{name}.inputs.npz", **{f"arg{i:03d}": a for i, a in enumerate(arrays)})
    meta = {"name": name, "frontend": frontend, "description": description,
            "export_s": round(seconds, 2), "parameters": parameters, "n_inputs": len(arrays),
            "mlir_bytes": len(text.encode()),
            "inputs": [f"{a.dtype}{list(a.shape)}" for a in arrays], "versions": package_versions()}
    (out / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n")
    megabytes = sum(a.nbytes for a in arrays) / 1e6
    print(f"{name}: {len(arrays)} inputs ({megabytes:.1f} MB), {parameters / 1e6:.2f} M parameters, "
          f"{len(text) / 1e3:.0f} kB of StableHLO in {seconds:.1f} s -> {out}")
    return 0


def package_versions(packages=PACKAGES) -> dict[str, str]:
    """Python's version and each package's ("absent" where it is not installed)."""
    found = {"python": platform.python_version()}
    for package in packages:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "absent"
    return found


if __name__ == "__main__":
    sys.exit(main())
