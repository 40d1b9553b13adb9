"""Compile times: the ``--mlir-timing`` report and a Chrome trace (Perfetto).

Both read a runner's ``times``: ``(stage, step, start, seconds)`` per step.
"""

from __future__ import annotations

import json
import os
import threading


def timing_report(times: list[tuple[str, str, float, float]]) -> str:
    """``--mlir-timing``'s layout: wall time per pass and per stage, and its share."""
    total = sum(seconds for *_, seconds in times) or 1e-9
    stages: dict[str, float] = {}
    for stage, _, _, seconds in times:
        stages[stage] = stages.get(stage, 0.0) + seconds
    bar = "===" + "-" * 73 + "==="
    lines = [bar, "xlac compile time report".center(79), bar,
             f"  Total Execution Time: {total:.4f} seconds", "",
             "  ----Wall Time----  ----Pass----"]
    lines += [_time_line(seconds, total, name) for _, name, _, seconds in times]
    lines += [_time_line(total, total, "Total"), "", "  ----Wall Time----  ----Stage----"]
    lines += [_time_line(seconds, total, stage) for stage, seconds in stages.items()]
    return "\n".join(lines) + "\n"


def _time_line(seconds: float, total: float, name: str) -> str:
    return f"  {seconds:8.4f} ({100 * seconds / total:5.1f}%)  {name}"


def chrome_trace(times: list[tuple[str, str, float, float]], title: str) -> dict:
    """Trace-event JSON: one span per stage, one per step inside it (open in Perfetto)."""
    if not times:
        return {"traceEvents": []}
    origin = times[0][2]
    pid, tid = os.getpid(), threading.get_ident() % (1 << 31)
    events = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": f"xlac {title}"}}]
    for stage, start, seconds in _stage_spans(times):
        events.append(_span(stage, "stage", start - origin, seconds, pid, tid))
    for stage, step, start, seconds in times:
        events.append(_span(step, stage, start - origin, seconds, pid, tid))
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def _stage_spans(times) -> list[tuple[str, float, float]]:
    spans: list[tuple[str, float, float]] = []
    for stage, _, start, seconds in times:
        if spans and spans[-1][0] == stage:
            name, first, _ = spans[-1]
            spans[-1] = (name, first, start + seconds - first)
        else:
            spans.append((stage, start, seconds))
    return spans


def _span(name: str, category: str, start: float, seconds: float, pid: int, tid: int) -> dict:
    return {"name": name, "cat": category, "ph": "X", "ts": round(start * 1e6, 1),
            "dur": round(seconds * 1e6, 1), "pid": pid, "tid": tid}


def write_trace(path, times, title: str) -> None:
    with open(path, "w") as handle:
        json.dump(chrome_trace(times, title), handle)
