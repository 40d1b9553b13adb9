"""The speed half of bench/jax_surface.py (issue 39): is any jax function users call slow?

Each case of bench/jax_surface_cases.py, grown to a moderate size (below), is
lowered with ``jax.jit(f).lower(*args).as_text()`` and compiled with
``xlac.compile(text, cpu=...)``; xlac (``exe.run`` on numpy arrays) and
``jax.jit(f)`` (the same numpy arrays, blocked until ready) then take turns in
one process, several rounds, and the medians are compared. Every case slower
than ``--flag`` times XLA is listed below the table.

    .venv/bin/python bench/jax_surface_speed.py                     # host level
    .venv/bin/python bench/jax_surface_speed.py --cpu x86-64-v3     # both capped (as bench/sweep.py)
    .venv/bin/python bench/jax_surface_speed.py --only 'sort|cumsum' --json out.json

The size knob: the cases are written small (a correctness survey), so each
argument's dims above 1 are multiplied by one factor ``s`` per case (dims of 1
stay, so broadcasting and shapes that must agree still do), the values drawn
again from the argument's own values (ranges, index bounds and dtypes kept; a
sorted vector stays sorted; a square matrix gets a heavy diagonal, so that
solves and factorizations stay well posed). ``s`` is chosen so that the largest
argument is about ``--mb`` MB, halved while one XLA call takes more than
``--max-ms``; a case whose program does not accept grown arguments (a random
key, a literal shape in ``f``) runs at its own size, marked ``s=1``.
"""
import argparse
import functools
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
FLAG = 1.5
PAUSE_S = 0.005


def grown(args, factor: int, rng):
    """``args`` with every dim above 1 times ``factor``, values drawn from their own."""
    import numpy as np
    if factor == 1:
        return list(args)
    out = []
    for a in args:
        a = np.asarray(a)
        if a.ndim == 0 or a.size == 0:
            out.append(a)
            continue
        shape = tuple(d * factor if d > 1 else d for d in a.shape)
        b = rng.choice(a.reshape(-1), size=shape)
        if a.ndim == 1 and a.size > 1 and np.all(a[1:] >= a[:-1]):
            b = np.sort(b)                          # searchsorted's, interp's grid
        if a.ndim >= 2 and a.shape[-1] == a.shape[-2] > 1 and a.dtype.kind in "fc":
            n = shape[-1]
            b = b + (n * np.abs(a).max() * np.eye(n)).astype(a.dtype)
        out.append(np.ascontiguousarray(b.astype(a.dtype)))
    return out


def first_factor(args, target_bytes: float) -> int:
    """The factor that makes the largest argument about ``target_bytes``."""
    import numpy as np
    arrays = [np.asarray(a) for a in args if np.ndim(a) > 0 and np.size(a) > 0]
    if not arrays:
        return 1
    big = max(arrays, key=lambda a: a.nbytes)
    grows = sum(d > 1 for d in big.shape)
    if grows == 0 or big.nbytes >= target_bytes:
        return 1
    return max(1, min(4096, int(round((target_bytes / big.nbytes) ** (1 / grows)))))


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def jax_call(fn):
    import jax
    jitted = jax.jit(fn)
    return lambda *a: jax.block_until_ready(jitted(*a))


def sized(fn, args, target_bytes: float, max_s: float, rng):
    """``(factor, args)``: the grown arguments XLA runs within ``max_s`` a call."""
    call = jax_call(fn)
    factor = first_factor(args, target_bytes)
    while factor > 1:
        try:
            trial = grown(args, factor, rng)
            call(*trial)                              # jax's compile, and a shape check
        except Exception:                             # noqa: BLE001 - a literal shape in f
            return 1, list(args)
        if timed(functools.partial(call, *trial)) <= max_s:
            return factor, trial
        factor //= 2
    return 1, list(args)


def time_case(fn, args, cpu: str, opts, rng) -> dict:
    """One case: sizes, compiles, checks once, then alternates xlac and XLA."""
    import jax
    import numpy as np
    from jax_surface import first_line, verdict

    import xlac
    factor, args = sized(fn, args, opts.mb * 2**20, opts.max_ms / 1e3, rng)
    row = {"s": factor, "mb": round(sum(np.asarray(a).nbytes for a in args) / 2**20, 3)}
    try:
        text = jax.jit(fn).lower(*args).as_text()
        exe = xlac.compile(text, cpu=None if cpu == "host" else cpu, cache=False)
    except Exception as exc:                          # noqa: BLE001 - a row, not the end
        return {**row, "error": first_line(exc)}
    jax_run = jax_call(fn)
    calls = {"xlac": lambda: exe.run(*args), "xla": lambda: jax_run(*args)}
    try:
        expected = [np.asarray(v) for v in jax.tree.leaves(jax_run(*args))]
        row["check"] = verdict(expected, [np.asarray(v) for v in exe.run(*args)])[0]
        each = {name: timed(call) for name, call in calls.items()}
    except Exception as exc:                          # noqa: BLE001
        return {**row, "error": first_line(exc)}
    rounds = int(min(opts.rounds, max(3, opts.budget_s / max(sum(each.values()), 1e-6))))
    times = {name: [] for name in calls}
    for turn in range(rounds):                        # alternated, each first in turn
        for name in (("xlac", "xla") if turn % 2 == 0 else ("xla", "xlac")):
            time.sleep(PAUSE_S)                       # XLA's pool spins a while after its calls
            times[name].append(timed(calls[name]))
    row.update({f"{name}_ms": statistics.median(t) * 1e3 for name, t in times.items()})
    row["ratio"] = row["xlac_ms"] / row["xla_ms"]
    row["rounds"] = rounds
    return row


def flagged(rows: dict, flag: float) -> list[str]:
    slow = sorted(((r["ratio"], n) for n, r in rows.items() if r.get("ratio", 0) > flag), reverse=True)
    return [f"  {name}: {ratio:.2f}x ({rows[name]['xlac_ms']:.3f} ms / {rows[name]['xla_ms']:.3f} ms, "
            f"s={rows[name]['s']})" for ratio, name in slow]


def parse_args(argv=None) -> argparse.Namespace:
    from run import XLA_MAX_ISA
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", default="host", choices=["host", *sorted(XLA_MAX_ISA)],
                        help="the level both compile for (XLA capped and CPUID masked as in bench/sweep.py)")
    parser.add_argument("--only", default="", help="regex: the case names to run")
    parser.add_argument("--mb", type=float, default=1.0, help="the largest argument's size to grow to")
    parser.add_argument("--max-ms", type=float, default=50.0, help="halve the size while XLA takes longer")
    parser.add_argument("--rounds", type=int, default=15, help="most alternated rounds per case")
    parser.add_argument("--budget-s", type=float, default=0.6, help="timed seconds per case (both)")
    parser.add_argument("--flag", type=float, default=FLAG, help="list cases above this xlac/XLA ratio")
    parser.add_argument("--json", default="", help="also write the rows to this JSON file")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    opts = parse_args(argv)
    from run import quiet_blas_threads, target_level
    if opts.cpu != "host":
        from cpu_mask import reexec_masked
        reexec_masked(opts.cpu)                       # returns only where it cannot mask
        target_level(opts.cpu)
    quiet_blas_threads()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import numpy as np
    from jax_surface_cases import all_cases
    rng = np.random.default_rng(39)
    rows = {}
    print(f"{'function':28} {'s':>5} {'MB':>7} {'xlac ms':>9} {'XLA ms':>9} {'ratio':>6}  check")
    for name, fn, args in all_cases():
        if not re.search(opts.only, name):
            continue
        rows[name] = row = time_case(fn, args, opts.cpu, opts, rng)
        if "error" in row:
            print(f"{name:28} {row['s']:5} {row['mb']:7.3f}  error: {row['error']}", flush=True)
            continue
        print(f"{name:28} {row['s']:5} {row['mb']:7.3f} {row['xlac_ms']:9.3f} {row['xla_ms']:9.3f} "
              f"{row['ratio']:6.2f}  {row['check']}", flush=True)
    slow = flagged(rows, opts.flag)
    ratios = [r["ratio"] for r in rows.values() if "ratio" in r]
    print(f"\ncpu level {opts.cpu}; load {Path('/proc/loadavg').read_text().split()[:3]}; "
          f"{len(ratios)} timed, geomean {statistics.geometric_mean(ratios) if ratios else 0:.2f}; "
          f"{len(slow)} above {opts.flag}x:")
    print("\n".join(slow))
    if opts.json:
        Path(opts.json).write_text(json.dumps({"cpu": opts.cpu, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
