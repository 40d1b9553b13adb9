"""What each rank runs for bench/distributed.py (started by it under mpiexec).

Every job returns rank 0's figures, reduced over the ranks where that matters
(a data-parallel step is as slow as its slowest rank: the maximum of the
ranks' medians).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

LR = 0.01


def _comm():
    from mpi4py import MPI
    return MPI, MPI.COMM_WORLD


def _model_arrays(layers: int, width: int, global_batch: int, rank: int, local: int):
    """Parameters (the same on every rank) and this rank's part of the batch."""
    rng = np.random.default_rng(0)
    params = []
    for _ in range(layers):
        params += [(rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32),
                   np.zeros(width, np.float32)]
    x, y = (rng.standard_normal((global_batch, width), dtype=np.float32) for _ in range(2))
    part = slice(rank * local, (rank + 1) * local)
    return params, x[part], y[part]


def _timed(run, iterations: int, comm, reset=None) -> list[float]:
    """Per-iteration seconds after two warm-up runs (first touch, caches);
    ``reset`` runs after the warm-up, so counters see the timed runs only."""
    for _ in range(2):
        run()
    comm.Barrier()
    if reset is not None:
        reset()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def _slowest(comm, value: float) -> float:
    return float(comm.allreduce(value, op=_comm()[0].MAX))


def xlac_steps(job: dict) -> list[tuple[str, dict]]:
    """The SPMD training step compiled by xlac (collectives inside) once per
    variant (overlap on or off, bucket size), the variants' steps interleaved
    (random order, the same on every rank), so that each sees the same load.
    Blocked time: the shim's counter read around each variant's steps."""
    import xlac
    from xlac.spmd.mpi import active_world
    _, comm = _comm()
    ranks, local = comm.size, job["local_batch"]
    params, x, y = _model_arrays(job["layers"], job["width"], ranks * local, comm.rank, local)
    inputs = params + [x, y]
    exes = []
    for variant in job["variants"]:
        options = xlac.Options.from_env().replace(
            overlap_collectives="auto" if variant["overlap"] else "off",
            collective_bucket_bytes=variant["bucket"])
        exes.append(xlac.compile(Path(job["program"]), options=options))
    outputs = [exe(*inputs) for exe in exes]
    world = active_world()
    blocked_now = (lambda: world.blocked()[0]) if world is not None else (lambda: 0.0)
    for _ in range(2):
        for exe in exes:
            exe(*inputs)
    times, blocked = [[] for _ in exes], [0.0] * len(exes)
    order = np.random.default_rng(11)
    comm.Barrier()
    for _ in range(job["iterations"]):
        for k in order.permutation(len(exes)):
            before, start = blocked_now(), time.perf_counter()
            exes[k](*inputs)
            times[k].append(time.perf_counter() - start)
            blocked[k] += blocked_now() - before
    found = []
    for variant, t, spent, out in zip(job["variants"], times, blocked, outputs):
        step = _slowest(comm, float(np.median(t)))
        found.append((variant["label"], {
            "step_s": step, "samples_per_s": ranks * local / step,
            "comm_s": _slowest(comm, spent / len(t)), "loss": float(out[0]),
            "w_checksum": float(np.sum(out[1].astype(np.float64)))}))
    return found


def baseline_step(job: dict) -> dict:
    """The same step as Python data-parallel code does it: xlac computes this
    rank's loss and gradients (no collectives), mpi4py all-reduces each
    gradient (numpy buffers, in place), numpy applies the update (the sum
    over ranks divided by them: the global batch's mean)."""
    import xlac
    MPI, comm = _comm()
    exe = xlac.compile(Path(job["program"]))
    ranks, local = comm.size, job["local_batch"]
    params, x, y = _model_arrays(job["layers"], job["width"], ranks * local, comm.rank, local)
    spent = [0.0]

    def step():
        loss, *grads = exe(*params, x, y)
        start = time.perf_counter()
        loss = np.asarray(loss)
        comm.Allreduce(MPI.IN_PLACE, loss)
        for g in grads:
            comm.Allreduce(MPI.IN_PLACE, g)
        spent[0] += time.perf_counter() - start
        return loss / ranks, [p - (LR / ranks) * g for p, g in zip(params, grads)]

    loss, updated = step()
    times = _timed(step, job["iterations"], comm, lambda: spent.__setitem__(0, 0.0))
    step_s = _slowest(comm, float(np.median(times)))
    return {"step_s": step_s, "samples_per_s": ranks * local / step_s,
            "comm_s": _slowest(comm, spent[0] / len(times)), "loss": float(loss),
            "w_checksum": float(np.sum(updated[0].astype(np.float64)))}


ALL_REDUCE = """
module @all_reduce attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%x: tensor<{count}xf32>) -> tensor<{count}xf32> {{
    %r = "stablehlo.all_reduce"(%x) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        replica_groups = dense<[{group}]> : tensor<1x{n}xi64>, use_global_device_ids}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }}) : (tensor<{count}xf32>) -> tensor<{count}xf32>
    return %r : tensor<{count}xf32>
  }}
}}
"""


def all_reduce_program(ranks: int, count: int) -> str:
    return ALL_REDUCE.format(n=ranks, count=count, group=list(range(ranks)))


def bandwidth(job: dict) -> dict:
    """Per size: a compiled all-reduce against mpi4py's Allreduce on the same
    arrays, interleaved (random order, the same on every rank; a barrier
    before each call). Medians, the slowest rank's."""
    import xlac
    MPI, comm = _comm()
    order = np.random.default_rng(7)
    return {str(size): _bandwidth_at(size // 4, comm, order, xlac) for size in job["sizes"]}


def _bandwidth_at(count: int, comm, order, xlac) -> dict:
    exe = xlac.compile(all_reduce_program(comm.size, count))
    x = np.random.default_rng(comm.rank).standard_normal(count).astype(np.float32)
    y, z = np.empty_like(x), np.empty_like(x)
    expected = comm.allreduce(float(np.sum(x.astype(np.float64))))
    exe.function([x.ctypes.data, z.ctypes.data])
    if abs(float(np.sum(z.astype(np.float64))) - expected) > 1e-3 * max(1.0, abs(expected)) + 1e-5 * count:
        raise SystemExit("the compiled all-reduce's result differs from mpi4py's")
    variants = {"xlac": lambda: exe.function([x.ctypes.data, z.ctypes.data]),
                "mpi4py": lambda: comm.Allreduce(x, y)}
    times = {name: [] for name in variants}
    iterations = max(5, min(200, (64 << 20) // max(4 * count, 1)))
    for step in range(iterations + 2):
        for name in order.permutation(list(variants)):
            comm.Barrier()
            start = time.perf_counter()
            variants[name]()
            if step >= 2:
                times[name].append(time.perf_counter() - start)
    return {name: _slowest(comm, float(np.median(t))) for name, t in times.items()}


def jax_step(job: dict) -> dict:
    """JAX's own multi-process CPU path: one process per rank, jax.distributed
    over the MPI job's ranks, the jitted shard_map step over one CPU device
    per process, gloo collectives."""
    import os
    _, comm = _comm()
    os.environ["JAX_PLATFORMS"] = "cpu"
    # one thread, as every other variant (XLA's CPU client would start a pool per core)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                               " intra_op_parallelism_threads=1").strip()
    import jax
    from jax._src import distributed
    if distributed.global_state.client is None:         # once per process: all jobs share it
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        port = comm.bcast(job["port"], root=0)
        jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}",
                                   num_processes=comm.size, process_id=comm.rank,
                                   local_device_ids=[0])
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P
    layers, width, local = job["layers"], job["width"], job["local_batch"]
    params, x, y = _model_arrays(layers, width, comm.size * local, comm.rank, local)
    mesh = Mesh(np.array(jax.devices()), ("batch",))

    def loss_fn(params, x, y):
        h = x
        for i in range(layers):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i + 1 < layers:
                h = jax.nn.relu(h)
        return jnp.mean((h - y) ** 2) / jax.lax.axis_size("batch")

    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.lax.psum(loss, "batch"), [p - LR * g for p, g in zip(params, grads)]

    step = jax.jit(jax.shard_map(train_step, mesh=mesh, in_specs=(P(), P("batch"), P("batch")),
                                 out_specs=(P(), P())))
    rep, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
    gparams = [jax.make_array_from_process_local_data(rep, p) for p in params]
    gx = jax.make_array_from_process_local_data(split, x)
    gy = jax.make_array_from_process_local_data(split, y)

    def run():
        loss, updated = step(gparams, gx, gy)
        jax.block_until_ready(updated)
        return loss, updated
    loss, updated = run()
    times = _timed(run, job["iterations"], comm)
    step_s = _slowest(comm, float(np.median(times)))
    first = np.asarray(updated[0].addressable_data(0))
    return {"step_s": step_s, "samples_per_s": comm.size * local / step_s,
            "loss": float(np.asarray(loss.addressable_data(0))),
            "w_checksum": float(np.sum(first.astype(np.float64)))}


JOBS = {"xlac": xlac_steps, "baseline": baseline_step, "bandwidth": bandwidth, "jax": jax_step}
