"""How many calls to make, in what order, and what to make of the times.

Backends take turns in short batches (round robin, the starting backend rotating each
round, a pause between batches), so a noisy stretch on the machine hits all of them
rather than one: the ratios stay fair even when the absolute times drift.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Stats:
    """Milliseconds per call."""

    median: float
    p10: float
    p90: float
    count: int


def stats(seconds: list[float]) -> Stats | None:
    if not seconds:
        return None
    ms = 1e3 * np.asarray(seconds)
    p10, median, p90 = np.percentile(ms, [10, 50, 90])
    return Stats(float(median), float(p10), float(p90), len(ms))


def plan_reps(estimates: dict[str, float], budget_s: float,
              min_reps: int, max_reps: int) -> dict[str, int]:
    """Equal time per backend: fast ones get many calls, slow ones at least ``min_reps``."""
    share = budget_s / max(len(estimates), 1)
    return {name: int(min(max(share / max(t, 1e-6), min_reps), max_reps))
            for name, t in estimates.items()}


@dataclass
class Interleaved:
    times: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def interleave(backends: dict, reps: dict[str, int], pause_s: float,
               max_rounds: int = 10, error_type: type = Exception) -> Interleaved:
    """Run ``reps[name]`` timed calls of each backend, spread over up to ``max_rounds`` rounds."""
    result = Interleaved(times={name: [] for name in reps})
    rounds = max(1, min(max_rounds, max(reps.values(), default=0)))
    names = list(reps)
    for index in range(rounds):
        for name in names[index % len(names):] + names[:index % len(names)]:
            count = _batch(reps[name], index, rounds)
            if count == 0 or name in result.errors:
                continue
            try:
                result.times[name] += backends[name].time(count)
            except error_type as exc:
                result.errors[name] = str(exc)
            time.sleep(pause_s)
    return result


def _batch(total: int, index: int, rounds: int) -> int:
    """This round's share of ``total`` calls, so the calls spread evenly over the rounds."""
    return (index + 1) * total // rounds - index * total // rounds


def max_rel_error(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    """Largest |got - want| relative to the largest |want|, over all outputs."""
    if len(got) != len(want):
        return float("inf")
    worst = 0.0
    for a, b in zip(got, want):
        a, b = _real(a), _real(b)
        if a.shape != b.shape:
            return float("inf")
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return float("nan")
        same = (a == b) | (np.isnan(a) & np.isnan(b))     # also equal infinities
        with np.errstate(invalid="ignore"):
            diff = np.abs(np.where(same, 0.0, a - b))
        scale = np.abs(b[np.isfinite(b)]).max(initial=0.0)
        worst = max(worst, float(diff.max(initial=0.0)) / max(scale, 1e-30))
    return worst


def _real(array) -> np.ndarray:
    """As float64; a complex array as its real and imaginary parts side by side."""
    array = np.asarray(array)
    if array.dtype.kind == "c":
        return np.stack([array.real, array.imag], -1).astype(np.float64)
    return array.astype(np.float64)
