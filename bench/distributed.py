"""Distributed benchmarks (docs/distributed.md): what a collective costs, and how
a data-parallel training step scales over processes.

    python bench/distributed.py                     # both, launching mpiexec itself
    python bench/distributed.py --only overhead     # or: scaling

overhead: a 4 MiB f32 all-reduce on 2 ranks: a compiled xlac program whose
  body is one stablehlo.all_reduce, against mpi4py's ``comm.Allreduce`` on
  the same arrays, interleaved in one run (random order per iteration, the
  same on every rank, a barrier before each call); rank 0's medians.
scaling: ../shared/bench/suite/train_step (MLP, batch 256) on 1 rank x 1
  thread, against the same step data-parallel on 2 ranks x 1 thread each:
  the batch split in two, the gradients all-reduced (jax.shard_map + pmean,
  exported through jax.export on 2 CPU devices). Throughput = samples/s.

Needs the distributed and bench extras (mpi4py, MPICH, jax).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BIND = os.environ.get("BENCH_MPI_BIND", "-bind-to core").split()
SUITE = REPO.parent / "shared" / "bench" / "suite"
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
    return str(Path(sys.executable).with_name(name))


def _launch(ranks: int, args: list[str], threads: int) -> dict:
    """This script as a worker under mpiexec; rank 0's JSON result."""
    env = dict(os.environ, XLAC_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = ["timeout", "900", _tool("mpiexec"), "-n", str(ranks), *BIND,
                   sys.executable, __file__, "--worker", out.name, *args]
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


# ---------------------------------------------------------------- scaling

_DATA_PARALLEL = r"""
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
from functools import partial
import jax, jax.numpy as jnp
from jax import export
from jax.sharding import NamedSharding, PartitionSpec as P
LR = 0.01
def train_step(w1, b1, w2, b2, x, y):
    def loss_fn(params):
        w1, b1, w2, b2 = params
        h = jax.nn.relu(x @ w1 + b1)
        # this device's share of the global mean
        return jnp.mean((h @ w2 + b2 - y) ** 2) / jax.lax.axis_size("batch")
    params = (w1, b1, w2, b2)
    # the parameters are the same on every device, so shard_map sums their
    # gradients over "batch" (psums in the backward pass): the data-parallel part
    loss, grads = jax.value_and_grad(loss_fn)(params)
    return (jax.lax.psum(loss, "batch"), *[p - LR * g for p, g in zip(params, grads)])
mesh = jax.make_mesh((2,), ("batch",))
rep, split = P(), P("batch")
step = jax.shard_map(train_step, mesh=mesh, in_specs=(rep, rep, rep, rep, split, split),
                     out_specs=(rep, rep, rep, rep, rep))
f32 = jnp.float32
shapes = [(1024, 1024), (1024,), (1024, 1024), (1024,), (256, 1024), (256, 1024)]
specs = [rep, rep, rep, rep, split, split]
args = [jax.ShapeDtypeStruct(s, f32, sharding=NamedSharding(mesh, p)) for s, p in zip(shapes, specs)]
sys.stdout.write(export.export(jax.jit(step))(*args).mlir_module())
"""


def scaling_worker(ranks: int, iterations: int, program: str) -> dict:
    import xlac
    from xlac.spmd.mpi import active_world
    exe = xlac.compile(Path(program))
    rank = active_world().rank if ranks > 1 else 0
    rng = np.random.default_rng(0)
    w1, w2 = (rng.standard_normal((1024, 1024), dtype=np.float32) / 32 for _ in range(2))
    b1, b2 = np.zeros(1024, np.float32), np.zeros(1024, np.float32)
    x, y = (rng.standard_normal((256, 1024), dtype=np.float32) for _ in range(2))
    local = exe.signature.inputs[4].shape[0]          # this rank's part of the batch
    inputs = [w1, b1, w2, b2, x[rank * local:(rank + 1) * local], y[rank * local:(rank + 1) * local]]
    loss = float(exe(*inputs)[0])
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        exe(*inputs)
        times.append(time.perf_counter() - start)
    step = float(np.median(times))
    updated = exe(*inputs)[1]
    return {"step_s": step, "samples_per_s": local * ranks / step, "loss": loss,
            "w1_checksum": float(np.sum(updated.astype(np.float64)))}


def _data_parallel_program(directory: Path) -> Path:
    done = subprocess.run([sys.executable, "-c", _DATA_PARALLEL], capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        sys.exit("exporting the data-parallel train_step with jax failed:\n" + done.stderr[-2000:])
    path = directory / "train_step_dp2.mlir"
    path.write_text(done.stdout)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["overhead", "scaling"])
    parser.add_argument("--iterations", type=int, default=0)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--job", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kind, *rest = args.job
        result = overhead_worker(int(rest[0])) if kind == "overhead" else \
            scaling_worker(int(rest[0]), int(rest[1]), rest[2])
        if int(os.environ.get("PMI_RANK", "0")) == 0:
            Path(args.worker).write_text(json.dumps(result))
        return
    if args.only in (None, "overhead"):
        report_overhead(_launch(2, ["--job", "overhead", str(args.iterations or 200)], 1))
    if args.only in (None, "scaling"):
        report_scaling(args.iterations or 20)


def report_overhead(result: dict) -> None:
    base, fast = result["mpi4py Allreduce(x, y)"]
    print("all-reduce of 4 MiB f32 on 2 ranks (interleaved; rank 0's median and 10th percentile):")
    for name, (median, p10) in result.items():
        print(f"  {name:28s} median {median * 1e3:7.3f} ms ({100 * (median / base - 1):+5.1f}%)  "
              f"p10 {p10 * 1e3:7.3f} ms ({100 * (p10 / fast - 1):+5.1f}%)")


def report_scaling(iterations: int) -> None:
    """Measured: 1 rank vs 2 ranks. Also the parts of a 2-rank step, each alone (half
    the batch on one core; the gradients' all-reduce), for a machine whose cores
    other work also uses: their sum is what the 2-rank step costs on idle cores."""
    source = SUITE / "train_step.stablehlo.mlir"
    with tempfile.TemporaryDirectory() as directory:
        dp2 = _data_parallel_program(Path(directory))
        half = Path(directory) / "train_step_b128.mlir"
        half.write_text(source.read_text().replace("256x1024", "128x1024")
                        .replace("2.621440e+05", "1.310720e+05"))
        single = _launch(1, ["--job", "scaling", "1", str(iterations), str(source)], 1)
        double = _launch(2, ["--job", "scaling", "2", str(iterations), str(dp2)], 1)
        half_step = _launch(1, ["--job", "scaling", "1", str(iterations), str(half)], 1)["step_s"]
        # two independent half-batch steps at once, no communication: what the cores allow
        pair_step = _launch(2, ["--job", "scaling", "1", str(iterations), str(half)], 1)["step_s"]
    reduce = 2 * _launch(2, ["--job", "overhead", "50"], 1)["xlac exe(x)"][0]   # 2 x 4 MiB of gradients
    print("train_step (batch 256, MLP 1024-1024-1024), data parallel, 1 thread per rank:")
    for name, result in (("1 rank x 1 core", single), ("2 ranks x 1 core", double)):
        print(f"  {name:18s} step {result['step_s'] * 1e3:8.2f} ms  "
              f"{result['samples_per_s']:9.0f} samples/s  loss {result['loss']:.6f}")
    print(f"  measured speedup {double['samples_per_s'] / single['samples_per_s']:.2f}x; "
          f"updated w1 sums {single['w1_checksum']:.6f} / {double['w1_checksum']:.6f}")
    print(f"  parts alone: half batch {half_step * 1e3:.2f} ms + gradient all-reduce "
          f"{reduce * 1e3:.2f} ms -> {single['step_s'] / (half_step + reduce):.2f}x on idle cores")
    print(f"  two half batches at once, no communication: {pair_step * 1e3:.2f} ms each -> "
          f"these cores allow at most {single['step_s'] / pair_step:.2f}x")


if __name__ == "__main__":
    main()
