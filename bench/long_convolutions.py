"""Convolutions with many window taps (issue 39): compile time, run time
against XLA and error against numpy in float64, in one process.

    .venv/bin/python bench/long_convolutions.py [--cpu x86-64-v3] [--only REGEX] [--rounds 7]

Each case is lowered with ``jax.jit(f).lower(*args).as_text()`` and compiled
cold (``cache=False``); xlac and ``jax.jit(f)`` then take turns, ``--rounds``
batches each (at ``--cpu`` XLA is capped to the same level and CPUID masked,
as bench/sweep.py), and the minima and medians of the calls are printed with
the compile time and the largest error relative to the largest reference value.
"""
import argparse
import functools
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _ncw_reference(x, w, padding):
    """lax.conv_general_dilated's NCW x OIW -> NCW cross-correlation, float64."""
    import numpy as np
    lo, hi = padding
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (lo, hi)))
    n, c, width = x.shape
    o, _, k = w.shape
    out = np.zeros((n, o, width - k + 1))
    for b in range(n):
        for f in range(o):
            for i in range(c):
                out[b, f] += np.correlate(x[b, i], w[f, i].astype(np.float64), "valid")
    return out


def cases():
    """(name, function, arguments, float64 reference)."""
    import jax
    import jax.numpy as jnp
    import jax.scipy.signal as jss
    import numpy as np
    import scipy.signal as ss
    from jax import lax
    rng = np.random.default_rng(39)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    x, w = normal(5120), normal(1280)
    img, k31, tmpl = normal(256, 256), normal(31, 31), normal(64, 64)
    xb, wb = normal(8, 4, 4096), normal(4, 4, 512)
    xv, wv = normal(8, 4096), normal(8, 512)
    img21, k21, img42, k42 = normal(252, 252), normal(21, 21), normal(252, 252), normal(42, 42)
    x1, w14, x4, w44 = normal(1, 1, 5120), normal(4, 1, 1280), normal(1, 4, 5120), normal(4, 4, 1280)
    f64 = np.float64
    out = [(f"convolve.{mode}", lambda a, b, m=mode: jnp.convolve(a, b, mode=m), [x, w],
            lambda a, b, m=mode: np.convolve(a.astype(f64), b.astype(f64), m)) for mode in ("full", "same", "valid")]
    out += [(f"correlate.{mode}", lambda a, b, m=mode: jnp.correlate(a, b, mode=m), [x, w],
             lambda a, b, m=mode: np.correlate(a.astype(f64), b.astype(f64), m)) for mode in ("full", "valid")]
    out += [
        ("conv1d.8x4x4096*4x4x512.same", lambda a, b: lax.conv_general_dilated(a, b, (1,), "SAME"), [xb, wb],
         lambda a, b: _ncw_reference(a, b, (255, 256))),
        ("conv1d.8x4x4096*4x4x512.full", lambda a, b: lax.conv_general_dilated(a, b, (1,), [(511, 511)]), [xb, wb],
         lambda a, b: _ncw_reference(a, b, (511, 511))),
        ("conv1d.1x1x5120*4x1x1280.full", lambda a, b: lax.conv_general_dilated(a, b, (1,), [(1279, 1279)]),
         [x1, w14], lambda a, b: _ncw_reference(a, b, (1279, 1279))),
        ("conv1d.1x4x5120*4x4x1280.full", lambda a, b: lax.conv_general_dilated(a, b, (1,), [(1279, 1279)]),
         [x4, w44], lambda a, b: _ncw_reference(a, b, (1279, 1279))),
        ("vmap.convolve.8x4096*8x512.full", jax.vmap(jnp.convolve), [xv, wv],
         lambda a, b: np.stack([np.convolve(u.astype(f64), v.astype(f64)) for u, v in zip(a, b)])),
        ("convolve2d.256*31x31.same", lambda a, b: jss.convolve2d(a, b, mode="same"), [img, k31],
         lambda a, b: ss.convolve2d(a.astype(f64), b.astype(f64), mode="same")),
        ("convolve2d.252*21x21.same", lambda a, b: jss.convolve2d(a, b, mode="same"), [img21, k21],
         lambda a, b: ss.convolve2d(a.astype(f64), b.astype(f64), mode="same")),
        ("convolve2d.252*42x42.same", lambda a, b: jss.convolve2d(a, b, mode="same"), [img42, k42],
         lambda a, b: ss.convolve2d(a.astype(f64), b.astype(f64), mode="same")),
        ("correlate2d.256*64x64.valid", lambda a, b: jss.correlate2d(a, b, mode="valid"), [img, tmpl],
         lambda a, b: ss.correlate2d(a.astype(f64), b.astype(f64), mode="valid")),
    ]
    return out


def _times(call, n):
    out = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", default="host", help="host, or a level both xlac and XLA are capped to")
    parser.add_argument("--only", default="")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    from run import quiet_blas_threads, target_level
    if args.cpu and args.cpu != "host":
        from cpu_mask import reexec_masked
        reexec_masked(args.cpu)                       # returns only where it cannot mask
        target_level(args.cpu)
    quiet_blas_threads()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import numpy as np

    import xlac
    print(f"{'case':32} {'compile s':>9} {'xlac ms':>15} {'XLA ms':>15} {'ratio':>6} {'xlac err':>9} {'XLA err':>9}")
    for name, fn, inputs, reference in cases():
        if not re.search(args.only, name):
            continue
        text = jax.jit(fn).lower(*inputs).as_text()
        start = time.perf_counter()
        exe = xlac.compile(text, cpu=None if args.cpu == "host" else args.cpu, cache=False)
        compile_s = time.perf_counter() - start
        jitted = jax.jit(fn)
        calls = {"xlac": functools.partial(exe.run, *inputs),
                 "xla": lambda f=jitted, a=inputs: jax.block_until_ready(f(*a))}
        want = reference(*inputs)
        scale = np.abs(want).max()
        errors = {who: np.abs(np.asarray(call(), np.float64).reshape(want.shape) - want).max() / scale
                  for who, call in calls.items()}
        seen = {who: [] for who in calls}
        for r in range(args.rounds):
            for who in (list(calls) if r % 2 == 0 else list(calls)[::-1]):
                seen[who] += _times(calls[who], args.calls)
        ms = {who: (1e3 * min(t), 1e3 * statistics.median(t)) for who, t in seen.items()}
        print(f"{name:32} {compile_s:9.2f} {ms['xlac'][0]:7.3f}/{ms['xlac'][1]:7.3f} "
              f"{ms['xla'][0]:7.3f}/{ms['xla'][1]:7.3f} {ms['xlac'][1] / ms['xla'][1]:6.2f} "
              f"{errors['xlac']:9.2e} {errors['xla']:9.2e}", flush=True)
    print("times: min/median of", args.rounds * args.calls, "calls; load", open("/proc/loadavg").read().split()[:3])


if __name__ == "__main__":
    main()
