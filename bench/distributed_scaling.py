"""The scaling and bandwidth halves of bench/distributed.py: which programs and
jobs each rank count runs, and the tables printed from rank 0's results.

Scaling: the data-parallel training step (bench/distributed_programs.py) at
1, 2, 4, 8 ranks, one rank per core (mpiexec -bind-to core), one thread each:
  weak   each rank 128 samples (the global batch grows with the ranks)
  strong 256 samples in all (each rank 256 / ranks)
for `mlp` (the suite's train_step, 2 x 1024) weak and strong, and `deep` (6 x 1024)
weak, each as
  xlac overlap    collectives started early, waited for late (the default)
  xlac blocking   XLAC_OVERLAP_COLLECTIVES=0: one blocking MPI call each
                  (the xlac variants of one step run interleaved, step by step)
  mpi4py+numpy    xlac computes the local gradients, mpi4py all-reduces them
  jax             (--jax) JAX's own multi-process CPU path (gloo)
and for `deep` on more than one rank, gradient buckets of 1 and 64 MiB
(xla-combine-all-reduces). Throughput = samples/s of the slowest rank; speedup
against the same variant on one rank; communication share = the time a rank
sits blocked in collectives (xlac: the shim's count of blocking calls and waits;
mpi4py: its Allreduce calls) over the step.
Bandwidth: all-reduce of 4 KB ... 256 MB, xlac against mpi4py (bus bandwidth =
bytes x 2 (n - 1) / n / time, as nccl-tests count it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MODELS = {"mlp": [2, 1024], "deep": [6, 1024]}
WEAK_BATCH, STRONG_BATCH = 128, 256
BUCKETS = (1 << 20, 64 << 20)
SIZES = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20]
MARGIN_CORES = 1             # for the OS, mpiexec and the other processes of a shared machine


def usable_cores() -> int:
    return len(os.sched_getaffinity(0))


def scaling_caveat(ranks: int) -> str:
    cores = usable_cores()
    if cores >= ranks + MARGIN_CORES:
        return ""
    return (f"NOT a scaling measurement: {ranks} rank(s) on {cores} core(s); a rank per core "
            f"needs at least {ranks} + {MARGIN_CORES} cores")


def configs(ranks: int) -> list[dict]:
    """(model, mode, per-rank batch) measured at this rank count."""
    return [{"model": "mlp", "mode": "weak", "local": WEAK_BATCH},
            {"model": "mlp", "mode": "strong", "local": STRONG_BATCH // ranks},
            {"model": "deep", "mode": "weak", "local": WEAK_BATCH}]


def export_programs(directory: Path, rank_counts: list[int]) -> None:
    steps, gradients = [], []
    for n in rank_counts:
        for c in configs(n):
            steps.append([c["model"], n, c["local"]])
            gradients.append([c["model"], c["local"]])
    spec = directory / "spec.json"
    spec.write_text(json.dumps({"models": MODELS, "steps": steps, "gradients": gradients}))
    exporter = Path(__file__).with_name("distributed_programs.py")
    done = subprocess.run([sys.executable, str(exporter), str(directory), str(spec)],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        sys.exit("exporting the training steps with jax failed:\n" + done.stderr[-3000:])


def jobs_for(directory: Path, ranks: int, iterations: int, with_jax: bool,
             with_buckets: bool, with_bandwidth: bool, quick: bool = False) -> list[dict]:
    jobs = []
    for c in configs(ranks):
        layers, width = MODELS[c["model"]]
        common = {"layers": layers, "width": width, "local_batch": c["local"],
                  "iterations": iterations, "model": c["model"], "mode": c["mode"]}
        step = str(directory / f"{c['model']}_n{ranks}_b{c['local']}.mlir")
        variants = [("xlac overlap", {"overlap": True, "bucket": 0}),
                    ("xlac blocking", {"overlap": False, "bucket": 0})]
        if with_buckets and c["model"] == "deep" and ranks > 1:
            variants += [(f"xlac overlap, {b >> 20} MiB buckets", {"overlap": True, "bucket": b})
                         for b in BUCKETS]
            if not quick:
                variants += [(f"xlac blocking, {b >> 20} MiB buckets", {"overlap": False, "bucket": b})
                             for b in BUCKETS]
        chosen = [dict(extra, label=label) for label, extra in variants
                  if ranks > 1 or extra["overlap"]]     # one rank: no collectives to overlap
        jobs.append({"kind": "xlac", "label": "xlac", "program": step, "variants": chosen,
                     **common})
        grad = str(directory / f"{c['model']}_grad_b{c['local']}.mlir")
        jobs.append({"kind": "baseline", "label": "mpi4py+numpy", "program": grad, **common})
        if with_jax:
            jobs.append({"kind": "jax", "label": "jax (gloo)", "port": 23456 + ranks, **common})
    if with_bandwidth and ranks > 1:
        jobs.append({"kind": "bandwidth", "label": "bandwidth", "sizes": SIZES})
    return jobs


def report_scaling(results: dict[int, list[dict]]) -> None:
    """results: ranks -> [(job, figures)] as the workers returned them."""
    one = {(j["model"], j["mode"], j["label"]): r for j, r in results.get(1, []) if "model" in j}
    groups = sorted({(j["model"], j["mode"]) for jobs in results.values() for j, _ in jobs
                     if "model" in j}, key=lambda g: (g[0] != "mlp", g[1] != "weak"))
    for model, mode in groups:
        layers, width = MODELS[model]
        batch = f"{WEAK_BATCH} samples per rank" if mode == "weak" else \
            f"{STRONG_BATCH} samples in all"
        print(f"\n{model} ({layers} x {width}), {mode} scaling ({batch}):")
        print(f"  {'ranks':>5} {'variant':34s} {'step ms':>9} {'samples/s':>10} {'speedup':>8} "
              f"{'comm share':>10}")
        for ranks in sorted(results):
            for job, r in results[ranks]:
                if job.get("model") != model or job.get("mode") != mode:
                    continue
                base = one.get((model, mode, job["label"])) or one.get((model, mode, "xlac overlap"))
                speedup = r["samples_per_s"] / base["samples_per_s"] if base else float("nan")
                share = f"{100 * r['comm_s'] / r['step_s']:9.1f}%" if "comm_s" in r else f"{'-':>10}"
                print(f"  {ranks:5d} {job['label']:34s} {r['step_s'] * 1e3:9.2f} "
                      f"{r['samples_per_s']:10.0f} {speedup:7.2f}x {share}")
        _check_strong(results, model, mode)


def _check_strong(results, model, mode) -> None:
    """Strong scaling computes the same global step: the updated weights must agree."""
    if mode != "strong":
        return
    sums = [(n, job["label"], r["w_checksum"]) for n, jobs in sorted(results.items())
            for job, r in jobs if job.get("model") == model and job.get("mode") == mode]
    if sums:
        ref = sums[0][2]
        worst = max(abs(s - ref) / max(abs(ref), 1e-30) for _, _, s in sums)
        print(f"  updated first weight, sum over elements: {ref:.6f} on 1 rank; largest relative "
              f"difference of any rank count and variant {worst:.1e}")


def report_bandwidth(results: dict[int, list[dict]]) -> None:
    for ranks in sorted(results):
        for job, r in results[ranks]:
            if job["kind"] != "bandwidth":
                continue
            print(f"\nall-reduce of f32 on {ranks} ranks (interleaved; slowest rank's median; "
                  "bus bandwidth = bytes x 2(n-1)/n / time):")
            print(f"  {'bytes':>10} {'xlac':>10} {'mpi4py':>10} {'xlac GB/s':>10} "
                  f"{'mpi4py GB/s':>12} {'xlac/mpi4py':>12}")
            factor = 2 * (ranks - 1) / ranks
            for size, t in r.items():
                bx, bm = (int(size) * factor / t[k] / 1e9 for k in ("xlac", "mpi4py"))
                print(f"  {_bytes(int(size)):>10} {t['xlac'] * 1e6:8.1f}us {t['mpi4py'] * 1e6:8.1f}us "
                      f"{bx:10.3f} {bm:12.3f} {t['xlac'] / t['mpi4py']:11.2f}x")


def _bytes(size: int) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size // scale} {unit}"
    return f"{size} B"
