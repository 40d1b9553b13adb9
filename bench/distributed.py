"""Distributed benchmarks (docs/distributed.md): what a collective costs, how a
data-parallel training step scales over processes, all-reduce bandwidth.

    python bench/distributed.py                      # everything, launching mpiexec itself
    python bench/distributed.py --only scaling --ranks 1,2,4,8 --jax
    python bench/distributed.py --only bandwidth     # or: overhead, or scaling,bandwidth

overhead: a 4 MiB f32 all-reduce on 2 ranks: a compiled xlac program whose
  body is one stablehlo.all_reduce, against mpi4py's ``comm.Allreduce`` on
  the same arrays, interleaved in one run (random order per iteration, the
  same on every rank, a barrier before each call); rank 0's medians.
scaling, bandwidth: bench/distributed_scaling.py says what runs. Rank counts
  default to 1, 2, 4, 8 as far as this machine has cores; with fewer cores
  than ranks + 1 the figures are printed with a warning that they are no
  scaling measurement.

Needs the distributed and bench extras (mpi4py, MPICH, jax).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BIND = os.environ.get("BENCH_MPI_BIND", "-bind-to core").split()
ALL_REDUCE = """
module @all_reduce attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<Nxf32>) -> tensor<Nxf32> {
    %r = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<Nxf32>) -> tensor<Nxf32>
    return %r : tensor<Nxf32>
  }
}
"""


def _tool(name: str) -> str:
    """Beside this Python (the mpich wheel in a venv), else on PATH."""
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def _launch(ranks: int, args: list[str], threads: int, extra_env: dict | None = None):
    """This script as a worker under mpiexec; rank 0's JSON result."""
    env = dict(os.environ, XLAC_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads), **(extra_env or {}))
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = ["timeout", os.environ.get("BENCH_MPI_TIMEOUT", "900"), _tool("mpiexec"),
                   "-n", str(ranks), *BIND, sys.executable, __file__, "--worker", out.name, *args]
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"worker failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return json.loads(Path(out.name).read_text())


# ---------------------------------------------------------------- overhead

def overhead_worker(iterations: int) -> dict:
    from mpi4py import MPI

    import xlac
    comm = MPI.COMM_WORLD
    n = 1 << 20                                       # 4 MiB of f32
    exe = xlac.compile(ALL_REDUCE.replace("N", str(n)))
    x = np.random.default_rng(comm.rank).standard_normal(n).astype(np.float32)
    y = np.empty_like(x)
    assert np.allclose(exe(x), comm.allreduce(x.astype(np.float64)), atol=1e-4)
    z = np.empty_like(x)
    pointers = [x.ctypes.data, z.ctypes.data]
    variants = {"xlac exe(x)": lambda: exe(x),
                "xlac compiled code (x, y)": lambda: exe.function(pointers),
                "mpi4py Allreduce(x, y)": lambda: comm.Allreduce(x, y),
                "mpi4py Allreduce(x, new y)": lambda: comm.Allreduce(x, np.empty_like(x))}
    times = {name: [] for name in variants}
    order = np.random.default_rng(7)                  # the same order on every rank
    for step in range(iterations + 10):
        for name in order.permutation(list(variants)):
            comm.Barrier()
            start = time.perf_counter()
            variants[name]()
            if step >= 10:
                times[name].append(time.perf_counter() - start)
    return {name: [float(np.median(t)), float(np.percentile(t, 10))] for name, t in times.items()}


# ---------------------------------------------------------------- scaling, bandwidth

def run_jobs(jobs: list[dict]) -> list:
    """Worker side: every job in order; rank 0 keeps [(job, figures)]."""
    from distributed_workers import JOBS
    found = []
    for job in jobs:
        result = JOBS[job["kind"]](job)
        if job["kind"] == "xlac":                        # one entry per variant
            found += [[dict(job, label=label), figures] for label, figures in result]
        else:
            found.append([job, result])
    return found


def scaling_and_bandwidth(args) -> dict:
    import distributed_scaling as plan
    ranks = [int(r) for r in args.ranks.split(",")] if args.ranks else \
        [r for r in (1, 2, 4, 8) if r <= plan.usable_cores()]
    cache = Path(args.cache or tempfile.mkdtemp(prefix="xlac-bench-dist-"))
    programs = cache / "programs"
    programs.mkdir(parents=True, exist_ok=True)
    scaling = "scaling" in args.parts
    if scaling:
        plan.export_programs(programs, ranks)
    env = {"XLAC_CACHE_DIR": str(cache / "xlac")}
    results = {}
    for n in ranks:
        # --quick: buckets and bandwidth at the largest rank count only
        last = n == max(ranks) or not args.quick
        jobs = plan.jobs_for(programs, n, args.iterations or 10, args.jax,
                             not args.no_buckets and last,
                             "bandwidth" in args.parts and last, args.quick) if scaling else \
            [j for j in plan.jobs_for(programs, n, 1, False, False, True) if j["kind"] == "bandwidth"]
        if not jobs:
            continue
        # JAX's multi-process start must come before anything initializes its
        # backend (xlac's frontend may): its jobs run in a launch of their own
        results[n] = []
        for part, chosen in (("xlac", [j for j in jobs if j["kind"] != "jax"]),
                             ("jax", [j for j in jobs if j["kind"] == "jax"])):
            if chosen:
                spec = programs / f"jobs_n{n}_{part}.json"
                spec.write_text(json.dumps(chosen))
                results[n] += _launch(n, ["--job", "jobs", str(spec)], 1, env)
        caveat = plan.scaling_caveat(n)
        print(f"{n} rank(s) measured" + (f" -- {caveat}" if caveat else ""), flush=True)
    if scaling:
        plan.report_scaling(results)
    plan.report_bandwidth(results)
    caveats = [plan.scaling_caveat(n) for n in ranks if plan.scaling_caveat(n)]
    if caveats:
        print("\n" + "\n".join(caveats) + f"\n(this machine: {plan.usable_cores()} usable cores)")
    if not args.cache:
        shutil.rmtree(cache, ignore_errors=True)
    return {str(n): r for n, r in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated: overhead, scaling, bandwidth (default all)")
    parser.add_argument("--ranks", help="comma-separated rank counts (default 1,2,4,8 up to the cores)")
    parser.add_argument("--iterations", type=int, default=0)
    parser.add_argument("--jax", action="store_true", help="also JAX's multi-process CPU path")
    parser.add_argument("--no-buckets", action="store_true", help="skip the gradient-bucket variants")
    parser.add_argument("--quick", action="store_true",
                        help="buckets (overlapped only) and bandwidth at the largest rank count only")
    parser.add_argument("--cache", help="keep programs and compiled code here (reused by reruns)")
    parser.add_argument("--json", help="write the scaling and bandwidth figures here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--job", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    parts = set(args.only.split(",")) if args.only else {"overhead", "scaling", "bandwidth"}
    if parts - {"overhead", "scaling", "bandwidth"}:
        parser.error(f"--only: unknown part(s) {', '.join(sorted(parts - {'overhead', 'scaling', 'bandwidth'}))}")
    args.parts = parts
    if args.worker:
        kind, *rest = args.job
        if kind == "jobs":
            result = run_jobs(json.loads(Path(rest[0]).read_text()))
        else:
            result = overhead_worker(int(rest[0]))
        if int(os.environ.get("PMI_RANK", "0")) == 0:
            Path(args.worker).write_text(json.dumps(result))
        return
    if "overhead" in parts:
        report_overhead(_launch(2, ["--job", "overhead", str(args.iterations or 200)], 1))
    if parts & {"scaling", "bandwidth"}:
        figures = scaling_and_bandwidth(args)
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=1))


def report_overhead(result: dict) -> None:
    base, fast = result["mpi4py Allreduce(x, y)"]
    print("all-reduce of 4 MiB f32 on 2 ranks (interleaved; rank 0's median and 10th percentile):")
    for name, (median, p10) in result.items():
        print(f"  {name:28s} median {median * 1e3:7.3f} ms ({100 * (median / base - 1):+5.1f}%)  "
              f"p10 {p10 * 1e3:7.3f} ms ({100 * (p10 / fast - 1):+5.1f}%)")



if __name__ == "__main__":
    main()
