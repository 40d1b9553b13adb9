"""A fix's before and after on bench/jax_surface_speed.py's cases, alternated in one run.

    .venv/bin/python bench/jax_surface_ab.py --before-python /tmp/old-venv/bin/python \\
        --cases 'jnp.expm1:45,conv1d.NCH:16' [--cpu x86-64-v3] [--rounds 9]

Two workers, this venv's Python (after) and ``--before-python`` (a venv whose
xlac is the old tree: e.g. a copy of this one, its editable finder pointed at
the old tree's python/xlac and passes), each compile one case grown by the
given factor (jax_surface_speed.grown, the same seed: the same inputs), and
take turns: a batch of calls in one, then in the other, then XLA (in the after
worker), each round in a rotated order after a pause. Prints the medians of the batches' medians,
then the fastest single calls (under load the minima agree where the medians do not).
"""
import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAUSE_S = 0.05
sys.path.insert(0, str(HERE))


def worker() -> None:
    """Reads ``case NAME FACTOR`` then ``time WHO N`` lines; answers one JSON line each."""
    import jax
    import numpy as np
    from jax_surface_cases import all_cases
    from jax_surface_speed import grown, jax_call, timed

    import xlac
    cases = {name: (fn, args) for name, fn, args in all_cases()}
    calls = {}
    for line in sys.stdin:
        words = line.split()
        if words[0] == "case":
            fn, args = cases[words[1]]
            args = grown(args, int(words[2]), np.random.default_rng(39))
            exe = xlac.compile(jax.jit(fn).lower(*args).as_text(),
                               cpu=os.environ.get("XLAC_CPU") or None, cache=False)
            calls = {"xlac": functools.partial(exe.run, *args), "xla": functools.partial(jax_call(fn), *args)}
            for call in calls.values():
                call()
            print(json.dumps("ready"), flush=True)
        else:
            times = [timed(calls[words[1]]) for _ in range(int(words[2]))]
            print(json.dumps([statistics.median(times), min(times)]), flush=True)


class Worker:
    def __init__(self, python: str):
        self.proc = subprocess.Popen([python, __file__, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def ask(self, line: str):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before-python", required=True)
    parser.add_argument("--cases", required=True, help="NAME:FACTOR,... (the factor s of the speed table)")
    parser.add_argument("--cpu", default="host")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=5, help="calls per batch")
    if "--worker" in (argv or sys.argv):
        worker()
        return 0
    opts = parser.parse_args(argv)
    from run import quiet_blas_threads, target_level
    if opts.cpu != "host":
        from cpu_mask import reexec_masked
        reexec_masked(opts.cpu)
        target_level(opts.cpu)
    quiet_blas_threads()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    before, after = Worker(opts.before_python), Worker(sys.executable)
    print(f"{'case':28} {'before ms':>10} {'after ms':>10} {'XLA ms':>9} {'before/XLA':>10} {'after/XLA':>9}")
    for spec in opts.cases.split(","):
        name, factor = spec.split(":")
        for w in (before, after):
            w.ask(f"case {name} {factor}")
        times = {"before": [], "after": [], "xla": []}
        turns = [("before", before, "xlac"), ("after", after, "xlac"), ("xla", after, "xla")]
        for turn in range(opts.rounds):          # each first in turn: none always follows XLA
            for key, w, what in turns[turn % 3:] + turns[:turn % 3]:
                time.sleep(PAUSE_S)              # XLA's pool spins a while after its calls
                times[key].append(w.ask(f"time {what} {opts.calls}"))
        b, a, x = (statistics.median(t[0] for t in times[k]) * 1e3 for k in ("before", "after", "xla"))
        print(f"{name:28} {b:10.3f} {a:10.3f} {x:9.3f} {b / x:10.2f} {a / x:9.2f}", flush=True)
        b, a, x = (min(t[1] for t in times[k]) * 1e3 for k in ("before", "after", "xla"))
        print(f"{'  minima':28} {b:10.3f} {a:10.3f} {x:9.3f} {b / x:10.2f} {a / x:9.2f}", flush=True)
    print(f"cpu level {opts.cpu}; load {Path('/proc/loadavg').read_text().split()[:3]}; {time.strftime('%H:%M')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
