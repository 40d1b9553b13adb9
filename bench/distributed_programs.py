"""The programs bench/distributed.py runs, exported with JAX (run in a process
of its own: it sets XLA's host device count before jax is imported).

    python bench/distributed_programs.py OUT_DIR SPEC.json

SPEC: {"models": {name: [layers, width]}, "steps": [[model, ranks, local_batch], ...],
"gradients": [[model, local_batch], ...]}. Writes OUT_DIR/<name>.mlir for
each:
  step     <model>_n<ranks>_b<local_batch>: one data-parallel training step. On
           more than one rank, jax.shard_map over a mesh axis "batch" of that many
           CPU devices: parameters replicated, the batch split, gradients summed
           by the all-reduces JAX's transpose of the replicated parameters writes
           (psum), SGD update. On one rank the same step under plain jax.jit.
  gradient <model>_grad_b<local_batch>: the per-rank loss and gradients alone,
           for the baseline that all-reduces them with mpi4py and updates with
           numpy (dividing by the ranks there, so that one program serves all
           rank counts).
The model: an MLP of `layers` weight matrices width x width (ReLU between),
squared error against y, the `train_step` of ../shared/bench/suite when
layers = 2 and width = 1024.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

LR = 0.01
MAX_DEVICES = 8


def _model(layers: int):
    import jax
    import jax.numpy as jnp

    def loss_fn(params, x, y, ranks):
        h = x
        for i in range(layers):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i + 1 < layers:
                h = jax.nn.relu(h)
        return jnp.mean((h - y) ** 2) / ranks          # this rank's share of the global mean
    return loss_fn


def _shapes(layers: int, width: int, batch: int):
    params = [s for _ in range(layers) for s in ((width, width), (width,))]
    return params, [(batch, width), (batch, width)]


def step_program(layers: int, width: int, ranks: int, batch: int) -> str:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import export
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P
    loss_fn = _model(layers)
    param_shapes, data_shapes = _shapes(layers, width, batch * ranks)

    def train_step(*args):
        params, (x, y) = list(args[:-2]), args[-2:]
        n = jax.lax.axis_size("batch") if ranks > 1 else 1
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, n)
        if ranks > 1:
            loss = jax.lax.psum(loss, "batch")
        return (loss, *[p - LR * g for p, g in zip(params, grads)])

    f32 = jnp.float32
    if ranks == 1:
        args = [jax.ShapeDtypeStruct(s, f32) for s in param_shapes + data_shapes]
        return export.export(jax.jit(train_step))(*args).mlir_module()
    mesh = Mesh(np.array(jax.devices()[:ranks]), ("batch",))
    rep, split = P(), P("batch")
    specs = [rep] * len(param_shapes) + [split, split]
    step = jax.shard_map(train_step, mesh=mesh, in_specs=tuple(specs),
                         out_specs=tuple([rep] * (1 + len(param_shapes))))
    args = [jax.ShapeDtypeStruct(s, f32, sharding=NamedSharding(mesh, p))
            for s, p in zip(param_shapes + data_shapes, specs)]
    return export.export(jax.jit(step))(*args).mlir_module()


def gradient_program(layers: int, width: int, batch: int) -> str:
    import jax
    import jax.numpy as jnp
    from jax import export
    loss_fn = _model(layers)
    param_shapes, data_shapes = _shapes(layers, width, batch)

    def gradients(*args):
        params, (x, y) = list(args[:-2]), args[-2:]
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, 1)
        return (loss, *grads)
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in param_shapes + data_shapes]
    return export.export(jax.jit(gradients))(*args).mlir_module()


def main() -> None:
    out, spec = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={MAX_DEVICES}"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    models = spec["models"]
    for model, ranks, batch in spec.get("steps", []):
        path = out / f"{model}_n{ranks}_b{batch}.mlir"
        if not path.exists():
            path.write_text(step_program(*models[model], ranks, batch))
    for model, batch in spec.get("gradients", []):
        path = out / f"{model}_grad_b{batch}.mlir"
        if not path.exists():
            path.write_text(gradient_program(*models[model], batch))


if __name__ == "__main__":
    main()
