#!/usr/bin/env python
"""Benchmark xlac against XLA (jaxlib's CPU client) and numpy, in one interleaved run.

    python bench/run.py                          # the ten suite programs, about 5 minutes
    python bench/run.py --only gelu,matmul       # some of them
    python bench/run.py my.mlir --only my        # a program of your own (entry @main)
    python bench/run.py --quick --only gelu      # smoke run for CI
    python bench/run.py --out docs/PERFORMANCE.md
    python bench/run.py --target cuda --out bench_cuda.md   # xlac on the GPU against XLA GPU
    python bench/run.py --models --traces traces/ --out models.md   # + the real models, kernels
    python bench/run.py --target cuda --gpu-sized --profile   # H200-sized programs, rooflines

Both compilers get the same StableHLO text. The suite lives in <repo>/../shared/bench/suite;
its README has the anchors' figures and the machine limits behind the roofline column.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the worker process imports these too


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="extra StableHLO programs (.mlir)")
    parser.add_argument("--only", help="comma-separated program names to run")
    parser.add_argument("--target", choices=("cpu", "cuda"), default="cpu",
                        help="cpu: xlac, XLA CPU and numpy; cuda: xlac target=\"cuda\" against "
                             "XLA on jax's GPU client (inputs on the device, and host in/out)")
    parser.add_argument("--suite", type=Path,
                        help="the bench suite folder (default: <repo>/../shared/bench/suite)")
    parser.add_argument("--out", type=Path, help="also write the table as Markdown here")
    parser.add_argument("--models", action="store_true",
                        help="also the real models: ../shared/models and those bench/export_models.py "
                             "wrote to --models-dir; profiles xlac per kernel")
    parser.add_argument("--models-dir", type=Path, default=None,
                        help="the exported models (default: bench/models)")
    parser.add_argument("--gpu-sized", action="store_true",
                        help="instead of the suite: the GPU-sized programs bench/export_gpu_sized.py "
                             "wrote to --gpu-sized-dir, inputs on the device for xlac and XLA alike, "
                             "each against its roofline (implies --target cuda)")
    parser.add_argument("--gpu-sized-dir", type=Path, default=None,
                        help="the exported GPU-sized programs (default: bench/gpu_sized)")
    parser.add_argument("--profile", action=argparse.BooleanOptionalAction, default=None,
                        help="profile xlac per kernel after timing (exe.profile; --target cuda: CUDA "
                             "events around each launch; default: on with --traces, and with "
                             "--models on the CPU)")
    parser.add_argument("--traces", type=Path,
                        help="write a Chrome trace (Perfetto) of xlac's kernels per program here")
    parser.add_argument("--kernels", type=int, default=3, help="slowest kernels to report (default 3)")
    parser.add_argument("--profile-s", type=float, default=2.0,
                        help="seconds of profiled calls per program (1-10 calls; default 2)")
    parser.add_argument("--profile-max-compile-s", type=float, default=150.0,
                        help="no profile for a program xlac took longer to compile (default 150)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 1-2 calls per backend, no warm-up, no pauses")
    parser.add_argument("--threads", type=int,
                        help="pin the run to N CPUs (affinity, OMP/OPENBLAS/MKL thread counts)")
    parser.add_argument("--cpu", choices=sorted(XLA_MAX_ISA),
                        help="the CPU level both compilers target: xlac's XLAC_CPU and XLA's "
                             "--xla_cpu_max_isa; where the host has more, the whole run also sees "
                             "a CPUID masked to it (see --mask-cpuid)")
    parser.add_argument("--mask-cpuid", action=argparse.BooleanOptionalAction, default=True,
                        help="with --cpu, hide the host's features above that level from "
                             "CPUID (bench/cpuid_mask.c) so that XLA's dot and convolution "
                             "libraries and numpy's BLAS run that level's code too (default on)")
    parser.add_argument("--budget-s", type=float,
                        help="seconds of timed calls for the whole run (default 180; 480 with --models)")
    parser.add_argument("--min-reps", type=int, default=3)
    parser.add_argument("--max-reps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls after the first")
    parser.add_argument("--pause-ms", type=float, default=20.0, help="pause between batches")
    parser.add_argument("--max-call-s", type=float, default=20.0,
                        help="a first call slower than this is the only one timed")
    parser.add_argument("--kill-after-s", type=float, default=300.0,
                        help="an xlac compile or call still running after this is killed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--call-overhead", action=argparse.BooleanOptionalAction, default=True,
                        help="after the table, time a one-op program's call: xlac vs jax.jit "
                             "(bench/call_overhead.py; default on)")
    args = parser.parse_args(argv)
    if args.budget_s is None:
        args.budget_s = 480.0 if args.models else 180.0
    if args.profile is None:
        # a trace asked for is a profile on either target; real models profile on the CPU
        args.profile = args.traces is not None or (args.models and args.target == "cpu")
    if args.models_dir is None:
        args.models_dir = Path(__file__).resolve().parent / "models"
    if args.gpu_sized_dir is None:
        args.gpu_sized_dir = Path(__file__).resolve().parent / "gpu_sized"
    if args.gpu_sized:
        args.target = "cuda"
    if args.quick:
        args.min_reps, args.max_reps, args.warmup, args.pause_ms = 1, 2, 0, 0.0
        args.budget_s = 1.0
    return args


# xlac's CPU levels and the --xla_cpu_max_isa that caps XLA's generated code alike
XLA_MAX_ISA = {"x86-64-v2": "SSE4_2", "x86-64-v3": "AVX2", "x86-64-v4": "AVX512"}


def target_level(level: str) -> None:
    """Before jax starts and before the xlac worker is spawned (it inherits the environment)."""
    os.environ["XLAC_CPU"] = level
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = f"{flags} --xla_cpu_max_isa={XLA_MAX_ISA[level]}".strip()


def limit_threads(count: int) -> None:
    """Before numpy and XLA start their thread pools; the xlac worker inherits it all."""
    allowed = sorted(os.sched_getaffinity(0))[:max(count, 1)]
    os.sched_setaffinity(0, allowed)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(count)


def quiet_blas_threads() -> None:
    """numpy's OpenBLAS threads busy-wait about 0.1 s after each call (2^28 cycles)
    and took the cores from whichever backend ran next: xlac's conv2d, 0.86 ms
    after a 20 ms pause, took 3.99 ms (median) right after a batch of numpy
    matmuls. OPENBLAS_THREAD_TIMEOUT=4 (the least) makes them sleep at once; one
    the user set is kept. Before numpy loads."""
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.cpu and args.mask_cpuid:
        from cpu_mask import reexec_masked
        reexec_masked(args.cpu)          # returns only where it cannot mask
    quiet_blas_threads()
    if args.threads:
        limit_threads(args.threads)
    if args.cpu:
        target_level(args.cpu)
    import harness  # numpy, jax: only after the thread settings
    if args.suite:
        harness.SUITE = args.suite.resolve()    # _select reads it; the worker gets full paths
    if args.gpu_sized:
        from gpu.harness import run_sized
        return run_sized(args)
    if args.target == "cuda":
        from gpu.harness import run
        return run(args)
    return harness.run(args)


if __name__ == "__main__":
    sys.exit(main())
