"""Matmul throughput on the GPU: xlac on cuBLASLt, xlac's generated kernels, PyTorch
(cuBLAS) and XLA (jax on the GPU), in TFLOP/s.

    python bench/gpu/matmul_library.py [--rounds 5] [--out FILE.md] [--budget-s 100]
    python bench/gpu/matmul_library.py --dry-run      # no GPU: compiles xlac's programs only

Types: f32 at DEFAULT precision (TF32 in XLA, torch with allow_tf32, xlac's cuBLASLt
path), f32 at HIGHEST (full f32 everywhere), bf16 and f16 (f32 accumulation, result in
the operands' type). Shapes: 4096^3, 8192^3 and BERT-base's FFN up-projection (batch 8 x
sequence 512 tokens, 768 -> 3072). Inputs live on the device; each system is timed
the way it is called in a loop (back-to-back calls, one wait at the end of a round,
time per call = round / calls, calls sized to ~50 ms a round). Rounds interleave the
systems so that a busy GPU or host hits all alike; the median round is reported.
A system that is absent (no torch, no jax GPU backend, no libcublasLt) is a row saying so.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

SHAPES = {"4096^3": (4096, 4096, 4096), "8192^3": (8192, 8192, 8192),
          "bert-ffn 4096x768x3072": (4096, 3072, 768)}             # (m, n, k)
TYPES = {"f32 DEFAULT": ("f32", "DEFAULT"), "f32 HIGHEST": ("f32", "HIGHEST"),
         "bf16": ("bf16", "DEFAULT"), "f16": ("f16", "DEFAULT")}
SYSTEMS = ("xlac-cublaslt", "xlac-generated", "torch", "jax")
ROUND_S = 0.05


def program(m: int, n: int, k: int, element: str, precision: str) -> str:
    a, b, c = f"tensor<{m}x{k}x{element}>", f"tensor<{k}x{n}x{element}>", f"tensor<{m}x{n}x{element}>"
    return (f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], "
            f"precision = [{precision}, {precision}] : ({a}, {b}) -> {c}\n  return %0 : {c}\n}}")


def numpy_inputs(m, n, k, element):
    import ml_dtypes
    dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}[element]
    rng = np.random.default_rng(0)
    return (rng.standard_normal((m, k), np.float32).astype(dtype),
            rng.standard_normal((k, n), np.float32).astype(dtype))


def xlac_system(mode: str, shape, element, precision, dry: bool):
    import xlac
    from xlac.targets.cuda.schedule import Gemm
    options = xlac.Options.from_env().replace(cuda_contractions=mode)
    exe = xlac.compile(program(*shape, element, precision), target="cuda", options=options)
    gemms = sum(isinstance(s, Gemm) for s in exe.function.steps)
    if mode == "cublaslt" and gemms != 1:
        raise RuntimeError(f"expected one cuBLASLt call, the schedule has {gemms}")
    if dry:
        return None
    a, b = (xlac.device_put(x) for x in numpy_inputs(*shape, element))
    return lambda: exe(a, b), lambda out: out.block_until_ready()


def torch_system(shape, element, precision):
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("this PyTorch has no CUDA")
    torch.backends.cuda.matmul.allow_tf32 = precision != "HIGHEST"
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[element]
    a, b = (torch.from_numpy(x.astype(np.float32)).to("cuda", dtype) for x in numpy_inputs(*shape, element))
    return lambda: torch.matmul(a, b), lambda out: torch.cuda.synchronize()


def jax_system(shape, element, precision):
    import jax
    import jax.numpy as jnp
    device = jax.devices("gpu")[0]
    given = jax.lax.Precision.HIGHEST if precision == "HIGHEST" else jax.lax.Precision.DEFAULT
    f = jax.jit(lambda a, b: jnp.matmul(a, b, precision=given))
    a, b = (jax.device_put(x, device) for x in numpy_inputs(*shape, element))
    return lambda: f(a, b), lambda out: out.block_until_ready()


def make(system: str, shape, element, precision, dry: bool):
    """``(call, wait)`` of ``system`` for one cell, or the reason it is absent."""
    try:
        if system.startswith("xlac"):
            return xlac_system(system.split("-")[1], shape, element, precision, dry)
        if dry:
            return None
        return (torch_system if system == "torch" else jax_system)(shape, element, precision)
    except Exception as exc:  # noqa: BLE001 - any missing piece is a row saying so
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:100] if str(exc) else ''}"


def timed_round(call, wait, calls: int) -> float:
    start = time.perf_counter()
    out = None
    for _ in range(calls):
        out = call()
    wait(out)
    return (time.perf_counter() - start) / calls


def measure(systems: dict, rounds: int) -> dict:
    """Median seconds per call of each system, rounds interleaved."""
    calls, failed = {}, {}
    for name, (call, wait) in systems.items():
        try:
            wait(call())                                       # compiled, warm
            once = timed_round(call, wait, 1)
        except Exception as exc:  # noqa: BLE001 - a system that fails is a row saying so
            failed[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:100] if str(exc) else ''}"
            continue
        calls[name] = max(1, min(200, int(ROUND_S / max(once, 1e-6))))
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name in calls:
            times[name].append(timed_round(*systems[name], calls[name]))
    return {**failed, **{name: statistics.median(values) for name, values in times.items()}}


def table(results: dict, dry: bool) -> str:
    lines = ["| type | shape | " + " | ".join(SYSTEMS) + " |", "|---|---|" + "---|" * len(SYSTEMS)]
    for (kind, shape_name), row in results.items():
        m, n, k = SHAPES[shape_name]
        cells = []
        for system in SYSTEMS:
            value = row.get(system)
            if isinstance(value, float):
                cells.append(f"{2 * m * n * k / value / 1e12:.1f}")
            else:
                dry_cell = "compiled (dry run)" if system.startswith("xlac") else "not run (dry run)"
                cells.append(dry_cell if dry and value is None else str(value))
        lines.append(f"| {kind} | {shape_name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget-s", type=float, default=100.0, help="stop starting cells past this")
    parser.add_argument("--dry-run", action="store_true", help="compile xlac's programs, run nothing")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated names of SHAPES")
    parser.add_argument("--out", help="also write the table (markdown) here")
    args = parser.parse_args(argv)
    start, results = time.perf_counter(), {}
    for shape_name in args.shapes.split(","):
        for kind, (element, precision) in TYPES.items():
            if time.perf_counter() - start > args.budget_s:
                results[kind, shape_name] = dict.fromkeys(SYSTEMS, "not run (budget)")
                continue
            shape = SHAPES[shape_name]
            made = {s: make(s, shape, element, precision, args.dry_run) for s in SYSTEMS}
            runnable = {s: v for s, v in made.items() if isinstance(v, tuple)}
            row = {s: v for s, v in made.items() if not isinstance(v, tuple)}
            row.update(measure(runnable, args.rounds) if runnable else {})
            results[kind, shape_name] = row
            print(f"{kind} {shape_name}: done at {time.perf_counter() - start:.0f} s", file=sys.stderr)
    text = table(results, args.dry_run)
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
