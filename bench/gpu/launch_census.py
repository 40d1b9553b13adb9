"""Kernels per program on the cuda target against the fusion plan's groups (compile only,
no GPU): for each model, the CPU fusion groups, the launches with generated matmuls, the
launches and cuBLASLt calls with the library, and where the loop nests that become
kernels come from (the entry's linalg ops just before the kernel passes, by kind).

    .venv/bin/python bench/gpu/launch_census.py [MODEL.mlir ...]   (default: the shared models)

A kind with no CPU group of its own (a named transpose, a copy, an im2col) is a launch the
CPU's fused kernels do not have. "linalg ops" (fills left out) is not the launch count: row
chains and multi-output kernels take several ops, a split reduction launches twice."""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from pathlib import Path

import xlac
from xlac.context import new_context
from xlac.mlir import ir
from xlac.pipeline.pass_manager import run_passes
from xlac.targets.cuda.pipeline import bufferize

MODELS = ("hf_bert", "hf_vit", "hf_gpt2", "flax_resnet18", "flax_cnn_train_step", "jax_nbody")
GEMM_CALL = re.compile(r"call @xla_gemm_\d+\(")
KINDS = ("matmul", "transpose", "copy", "elementwise+transpose", "elementwise", "reduction",
         "im2col/gather", "fill")


def groups(exe) -> int:
    """Fusion groups plus ops left as their own kernel: the kernels the CPU plan has."""
    fused, alone = re.match(r"(\d+) fusion\(s\), (\d+) op\(s\)", exe.fusion_report()).groups()
    return int(fused) + int(alone)


def compiled(text: str, contractions: str):
    os.environ["XLAC_CUDA_CONTRACTIONS"] = contractions
    return xlac.compile(text, target="cuda")


def before_kernels(linalg_text: str) -> ir.Module:
    """The linalg stage through the gpu-loops passes that come before the kernel ones."""
    steps = bufferize()
    steps = steps[:steps.index("xla-gpu-matmul-kernels")]
    ctx = new_context()
    module = ir.Module.parse(linalg_text, ctx)
    run_passes(module, steps)
    return module


def kind(op) -> str:
    """What kind of loop nest ``op`` (a linalg op) is."""
    name = op.name.removeprefix("linalg.")
    if name in ("matmul", "batch_matmul", "transpose", "fill"):
        return "matmul" if "matmul" in name else name
    if name != "generic":
        return f"other ({name})"
    if "reduction" in str(op.attributes["iterator_types"]):
        return "reduction"
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    inputs = maps[:_ins(op)]
    if any(not re.fullmatch(r"d\d+|\d+", str(e)) for m in inputs for e in m.results):
        return "im2col/gather"
    permuted = any(_permutes(m) for m in inputs)
    body = list(op.regions[0].blocks[0].operations)
    if len(body) == 1:
        return "transpose" if permuted else "copy"
    return "elementwise+transpose" if permuted else "elementwise"


def _ins(op) -> int:
    sizes = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])
    return sizes[0]


def _permutes(affine_map) -> bool:
    """Does the map read its dims out of order (a transpose), not just drop some?"""
    dims = [int(str(e).removeprefix("d")) for e in affine_map.results if re.fullmatch(r"d\d+", str(e))]
    return dims != sorted(dims)


def census(module: ir.Module) -> Counter:
    counts = Counter()

    def visit(op):
        if op.name.startswith("linalg."):
            counts[kind(op)] += 1
            return
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    visit(inner.operation)

    visit(module.operation)
    return counts


def row(path: Path) -> dict:
    text = path.read_text()
    generated, library = compiled(text, "generated"), compiled(text, "cublaslt")
    launches = generated.as_text("gpu").count("gpu.launch_func")
    library_gpu = library.as_text("gpu")
    kinds = census(before_kernels(generated.as_text("linalg")))
    accounted = sum(n for k, n in kinds.items() if k != "fill")
    return {"model": path.stem, "groups": groups(generated), "launches": launches,
            "library launches": library_gpu.count("gpu.launch_func"),
            "library calls": len(GEMM_CALL.findall(library_gpu)),
            "linalg ops": accounted, **{k: kinds.get(k, 0) for k in KINDS},
            "other": ", ".join(f"{n} {k[7:-1]}" for k, n in kinds.items() if k not in KINDS) or "-"}


def model_paths(arguments: list[str]) -> list[Path]:
    if arguments:
        return [Path(a) for a in arguments]
    shared = Path(os.environ.get("XLAC_SHARED", Path(__file__).resolve().parents[3] / "shared"))
    return [shared / "models" / f"{m}.mlir" for m in MODELS]


def main(arguments: list[str]) -> None:
    rows = [row(path) for path in model_paths(arguments)]
    header = list(rows[0])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(str(r[h]) for h in header) + " |", flush=True)
    print("\nlaunches: generated matmuls (kernels); library launches + calls: cuBLASLt path; "
          "kinds: the entry's linalg ops before the kernel passes (generated path; fills are "
          "mostly folded into the kernel after them)")


if __name__ == "__main__":
    main(sys.argv[1:])
