#!/usr/bin/env python
"""What a call costs beyond its work: a one-op program (``a + b`` on f32[n]) called
from Python, xlac against ``jax.jit``, in one process, interleaved.

    python bench/call_overhead.py                      # f32[4], f32[64], f32[1024]
    python bench/call_overhead.py --sizes 4,16,256,1024 --rounds 60

``bench/run.py`` prints the same table after its own (``--no-call-overhead``: not).
Three contenders take turns in batches, the first rotating each round: xlac's
``exe(x, y)`` and ``jax.jit(f)(x, y).block_until_ready()`` with the same numpy
arrays, and jax.jit with jax arrays (already on the device: no copy in, for context).
Microseconds per call, the median over rounds of each batch's mean.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import interleave  # noqa: E402

SIZES = (4, 64, 1024)
HEADER = ("program", "xlac us", "jax.jit numpy us", "jax.jit jax arrays us", "xlac/jax.jit numpy")


class _Calls:
    """One contender: ``time(count)`` is one sample, the mean of ``count`` calls."""

    def __init__(self, call, args):
        self._call, self._args = call, args

    def time(self, count: int) -> list[float]:
        call, args = self._call, self._args
        start = time.perf_counter()
        for _ in range(count):
            call(*args)
        return [(time.perf_counter() - start) / count]


def _add(size: int) -> str:
    t = f"tensor<{size}xf32>"
    return (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %0 = stablehlo.add %a, %b : {t}\n  return %0 : {t}\n}}\n")


def contenders(size: int) -> dict[str, _Calls]:
    import jax
    import numpy as np

    import xlac
    exe = xlac.compile(_add(size), cache=False)
    jitted = jax.jit(lambda a, b: a + b)
    x, y = np.arange(size, dtype=np.float32), np.ones(size, np.float32)
    jx, jy = jax.device_put(x), jax.device_put(y)
    np.testing.assert_array_equal(exe(x, y), np.asarray(jitted(x, y)))
    return {"xlac": _Calls(exe, (x, y)),
            "jax.jit numpy": _Calls(lambda a, b: jitted(a, b).block_until_ready(), (x, y)),
            "jax.jit jax arrays": _Calls(lambda a, b: jitted(a, b).block_until_ready(), (jx, jy))}


def measure(sizes=SIZES, rounds: int = 40, batch: int = 200) -> list[tuple[str, ...]]:
    """One row per size: microseconds per call of each contender, and the ratio."""
    rows = []
    for size in sizes:
        calls = contenders(size)
        for contender in calls.values():
            contender.time(max(batch // 4, 1))                          # warm
        timed = interleave(calls, dict.fromkeys(calls, rounds * batch), 0.0, rounds)
        us = {name: 1e6 * statistics.median(times) for name, times in timed.times.items()}
        rows.append((f"f32[{size}] + f32[{size}]", *(f"{us[name]:.2f}" for name in calls),
                     f"{us['xlac'] / us['jax.jit numpy']:.2f}"))
    return rows


def text_lines(rows) -> list[str]:
    """The section ``bench/run.py`` prints after its table."""
    from report import aligned
    return ["", "call overhead: one-op programs, us per call (median), one process, "
            "interleaved", aligned(HEADER, rows, [])]


def markdown_lines(rows) -> list[str]:
    lines = ["", "## Call overhead", "",
             "A one-op program called from Python: xlac's `exe(x, y)` against "
             "`jax.jit(f)(x, y).block_until_ready()`, both with numpy inputs (jax arrays for "
             "context), microseconds per call, median, one process, interleaved.", "",
             "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="element counts of the f32 operands (default 4,64,1024)")
    parser.add_argument("--rounds", type=int, default=40, help="batches per contender")
    parser.add_argument("--batch", type=int, default=200, help="calls per batch")
    args = parser.parse_args(argv)
    rows = measure([int(s) for s in args.sizes.split(",")], args.rounds, args.batch)
    print("\n".join(text_lines(rows)[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
