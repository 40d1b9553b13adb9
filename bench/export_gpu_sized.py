#!/usr/bin/env python
"""Export the GPU-sized benchmark programs to StableHLO text with jax.export.

    pip install -e '.[bench,gpu-bench]'                 # jax; flax, transformers, optax for the models
    python bench/export_gpu_sized.py                    # all, real sizes, into bench/gpu_sized/
    python bench/export_gpu_sized.py --only gelu,matmul_bf16_8192
    python bench/export_gpu_sized.py --scale 1/256 --out /tmp/tiny   # the same programs, small
    python bench/export_gpu_sized.py --list

Each program NAME becomes NAME.mlir (``jax.export``'s module text) and NAME.json (what it is,
the peak that bounds it, its FLOPs, and for every argument how to draw it: a normal with the
mean and spread of the initialised weight, or an integer range). Weights are arguments and
are drawn on the GPU machine from those numbers (seeded), so the whole real-size set is a few
MB of text. A model whose package is missing is reported and skipped (``--skip-missing``:
exit 0 all the same, as on a GPU machine that has jax but not transformers).
``run.py --target cuda --gpu-sized`` picks them up.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "gpu_sized"
PACKAGES = ("numpy", "jax", "jaxlib", "flax", "optax", "transformers")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the files go (default {DEFAULT_OUT})")
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--scale", type=_fraction, default=Fraction(1),
                        help="a factor on every size (default 1; the tests use 1/256)")
    parser.add_argument("--skip-missing", action="store_true",
                        help="a program whose package is not installed is skipped, not an error")
    parser.add_argument("--list", action="store_true", help="list the programs and exit")
    return parser.parse_args(argv)


def _fraction(text: str) -> Fraction:
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (e.g. 1, 0.25, 1/256)") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"--scale {text}: must be in (0, 1]")
    return value


def main(argv=None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(HERE))
    from zoo.gpu_sized import CASES
    if args.list:
        print("\n".join(CASES))
        return 0
    names = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"error: no program named {', '.join(unknown)}; have: {', '.join(CASES)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in names:
        try:
            export(name, CASES[name], float(args.scale), args.out, order=list(CASES).index(name))
        except ImportError as exc:
            print(f"{name}: not exported: {exc} (pip install -e '.[gpu-bench]')", file=sys.stderr)
            if not args.skip_missing:
                failed.append(name)
    if failed:
        print(f"error: not exported: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def export(name: str, builder, scale: float, out: Path, order: int = 0) -> None:
    import jax
    from export_models import package_versions
    from zoo.gpu_sized import Scale
    start = time.perf_counter()
    case = builder(Scale(scale))
    abstract = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), case.arguments)
    # weights as arguments: the text has the program, never the values
    text = jax.export.export(jax.jit(case.function))(*abstract).mlir_module()
    lowered = jax.jit(case.function).lower(*abstract)
    flops = case.flops if case.flops is not None else _cost_flops(lowered)
    if flops is None and case.peak == "hbm":
        flops = 0.0        # a transpose has no FLOPs to count, and its roofline needs none
    outputs = jax.tree_util.tree_leaves(lowered.out_info)
    meta = {"name": name, "order": order, "description": case.description, "peak": case.peak, "flops": flops,
            "scale": scale, "inputs": input_recipes(case), "outputs": [_spec(o) for o in outputs],
            "mlir_bytes": len(text.encode()), "export_s": round(time.perf_counter() - start, 2),
            "versions": package_versions(PACKAGES)}
    (out / f"{name}.mlir").write_text(text)
    (out / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n")
    gigabytes = sum(_nbytes(s) for s in meta["inputs"] + meta["outputs"]) / 1e9
    print(f"{name}: {len(meta['inputs'])} inputs, {gigabytes:.3f} GB in+out, "
          f"{(flops or 0) / 1e12:.3f} TFLOP, {len(text) / 1e3:.0f} kB of StableHLO "
          f"in {meta['export_s']:.1f} s -> {out}", flush=True)


def input_recipes(case) -> list[dict]:
    """How the harness draws each argument (leaves in jax's argument order)."""
    import jax
    recipes = []
    for index, argument in enumerate(case.arguments):
        for leaf in jax.tree_util.tree_leaves(argument):
            recipe = _spec(leaf)
            span = (case.ints or {}).get(index)
            if span is not None:
                recipe.update(low=int(span[0]), high=int(span[1]))
            else:
                recipe.update(_spread(leaf, recipe["dtype"]))
            recipes.append(recipe)
    return recipes


def _spread(leaf, dtype: str) -> dict:
    """A value's mean and spread (a weight keeps its initialiser's scale, a layer-norm
    scale stays 1); a shape alone is a standard normal."""
    import numpy as np
    if not hasattr(leaf, "__array__"):
        if dtype.startswith(("int", "uint", "bool")):
            raise ValueError(f"an integer argument {dtype}{list(leaf.shape)} needs a range (Case.ints)")
        return {"mean": 0.0, "std": 1.0}
    values = np.asarray(leaf)
    if values.dtype.kind in "iub":
        return {"low": int(values.min(initial=0)), "high": int(values.max(initial=0)) + 1}
    values = values.astype(np.float64)
    return {"mean": float(values.mean()) if values.size else 0.0,
            "std": float(values.std()) if values.size else 0.0}


def _spec(leaf) -> dict:
    import numpy as np
    return {"shape": [int(d) for d in leaf.shape], "dtype": str(np.dtype(leaf.dtype))}


def _nbytes(spec: dict) -> int:
    import numpy as np
    from ml_dtypes import bfloat16  # noqa: F401 - registers the name with numpy
    size = 1
    for d in spec["shape"]:
        size *= d
    return size * np.dtype(spec["dtype"]).itemsize


def _cost_flops(lowered) -> float | None:
    try:
        analysis = lowered.cost_analysis()
        analysis = analysis[0] if isinstance(analysis, list) else analysis
        return float(analysis["flops"])
    except Exception:  # noqa: BLE001 - then the harness takes XLA's count on the GPU
        return None


if __name__ == "__main__":
    sys.exit(main())
