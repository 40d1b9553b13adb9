"""Concatenates' copies on one thread against split among the threads
(``Options.split_copy_bytes``), alternated in one process, with XLA beside.

    .venv/bin/python bench/ab_concat_threads.py                       # host level
    .venv/bin/python bench/ab_concat_threads.py --cpu x86-64-v3
    .venv/bin/python bench/ab_concat_threads.py --cases c128-inner,f64-inner --split 262144,1048576

Each case is the sweep's (bench/sweep_cases.py: two 512 x 1024 operands,
"inner" joins them along the rows, "outer" stacks them). Every variant is
compiled once (no cache), checked bit for bit against numpy, then timed in
``--rounds`` rounds of ``--calls`` back-to-back calls, the variants (and XLA)
in turn each round; medians of the per-round means, wall and CPU time (CPU:
the process's, all threads). The split is judged by wall time on an idle
machine: with the second core busy a split only adds the fork-join (the CPU
column then equals the wall one). XLA is jax on the host CPU (not capped by
``--cpu``: compare its column only at the host level).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_CASES = "c128-inner,c64-inner,f64-inner,ui8-outer,f32-inner,c128-outer"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES, help="TYPE-LAYOUT, comma-separated")
    parser.add_argument("--split", default="1048576",
                        help="split_copy_bytes values to try against 0 (comma-separated)")
    parser.add_argument("--cpu", default="host")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--no-xla", action="store_true")
    args = parser.parse_args()
    print(f"load {open('/proc/loadavg').read().split()[:3]}, cpu level {args.cpu}", flush=True)
    for name in args.cases.split(","):
        variants = _variants(name, args)
        times = _alternated(variants, args.rounds, args.calls)
        print(_row(name, times), flush=True)
    print(f"load {open('/proc/loadavg').read().split()[:3]}", flush=True)


def _case(name: str):
    from sweep_cases import cases
    element, layout = name.split("-")
    [case] = [c for c in cases(types=(element,), classes=("concatenate",)) if c.layout == layout]
    return case


def _variants(name: str, args) -> dict:
    """{label: call} of every split value (0 first) and XLA, each checked once."""
    import jax

    import xlac
    case = _case(name)
    with jax.enable_x64(True):
        text = jax.jit(case.jax_fn).lower(*case.inputs).as_text()
    want = case.numpy_fn(*case.inputs)
    base = xlac.Options.from_env().replace(cache_dir="", cpu=args.cpu)
    calls = {}
    for split in [0, *map(int, args.split.split(","))]:
        exe = xlac.compile(text, options=base.replace(split_copy_bytes=split))
        got = exe.run(*case.inputs)[0]
        assert got.tobytes() == want.tobytes(), f"{name} split {split}: not bit-identical"
        calls[f"split {split}" if split else "one thread"] = \
            (lambda exe=exe: exe.run(*case.inputs))
    if not args.no_xla:
        with jax.enable_x64(True):
            inputs = [jax.device_put(x) for x in case.inputs]
            compiled = jax.jit(case.jax_fn).lower(*inputs).compile()
        calls["XLA (host)"] = lambda: compiled(*inputs).block_until_ready()
    return calls


def _alternated(calls: dict, rounds: int, count: int) -> dict:
    """{label: (wall ms, CPU ms)}: medians over the rounds of each round's mean."""
    walls = {label: [] for label in calls}
    cpus = {label: [] for label in calls}
    for _ in range(rounds):
        for label, call in calls.items():
            call()
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(count):
                call()
            walls[label].append((time.perf_counter() - wall) / count * 1e3)
            cpus[label].append((time.process_time() - cpu) / count * 1e3)
    return {label: (statistics.median(walls[label]), statistics.median(cpus[label]))
            for label in calls}


def _row(name: str, times: dict) -> str:
    single = times["one thread"][0]
    parts = [f"{label} {wall:.3f} ms (cpu {cpu:.3f}, x{wall / single:.2f})"
             for label, (wall, cpu) in times.items()]
    return f"{name}: " + " | ".join(parts)


if __name__ == "__main__":
    main()
