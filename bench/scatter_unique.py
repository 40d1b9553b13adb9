"""x.at[perm].set/add(u, unique_indices=True) (ROWS x 64 f32, default 100k): xlac
with the flag (parallel chunks of the updates) against the same program with the
flag cleared (the one-at-a-time loop main had for both) and XLA, alternated in one
process; medians and minima of ROUNDS rounds (default 15), best of 5 calls each.

    XLAC_CPU=x86-64-v3 ROUNDS=21 python bench/scatter_unique.py
"""

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

import xlac

ROWS, WIDTH = int(os.environ.get("ROWS", "100000")), 64
PROGRAMS = {"set": lambda x, p, u: x.at[p].set(u, unique_indices=True),
            "add": lambda x, p, u: x.at[p].add(u, unique_indices=True)}


def best_of(call, reps: int = 5) -> float:
    call()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def contenders(fn, x, perm, u) -> dict:
    """The three calls, each checked against XLA first."""
    text = export.export(jax.jit(fn))(x, perm, u).mlir_module()
    assert "unique_indices = true" in text
    options = xlac.Options.from_env()
    new = xlac.compile(text, cache=False, options=options)
    old = xlac.compile(text.replace("unique_indices = true", "unique_indices = false"),
                       cache=False, options=options)
    assert "scf.forall" in new.as_text("linalg") and "scf.forall" not in old.as_text("linalg")
    jitted, args = jax.jit(fn), [jnp.asarray(a) for a in (x, perm, u)]
    want = np.asarray(jitted(*args))
    for exe in (new, old):
        np.testing.assert_array_equal(np.asarray(exe(x, perm, u)), want)
    return {"old": lambda: old(x, perm, u), "new": lambda: new(x, perm, u),
            "xla": lambda: jitted(*args).block_until_ready()}


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, WIDTH)).astype(np.float32)
    perm = rng.permutation(ROWS).astype(np.int32)
    u = rng.standard_normal((ROWS, WIDTH)).astype(np.float32)
    for name, fn in PROGRAMS.items():
        calls = contenders(fn, x, perm, u)
        times = {key: [] for key in calls}
        for _ in range(int(os.environ.get("ROUNDS", "15"))):
            for key, call in calls.items():
                times[key].append(best_of(call))
        med = {k: 1e3 * float(np.median(v)) for k, v in times.items()}
        low = {k: 1e3 * float(np.min(v)) for k, v in times.items()}
        print(f"{name} {ROWS}x{WIDTH} cpu={os.environ.get('XLAC_CPU') or 'host'} "
              f"old {med['old']:.2f} new {med['new']:.2f} xla {med['xla']:.2f} ms "
              f"(new/xla {med['new'] / med['xla']:.2f}, old/new {med['old'] / med['new']:.2f}; "
              f"min {low['old']:.2f} / {low['new']:.2f} / {low['xla']:.2f}) "
              f"load {' '.join(open('/proc/loadavg').read().split()[:3])}", flush=True)


if __name__ == "__main__":
    main()
