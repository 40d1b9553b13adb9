"""Where a compiled program spends its time, kernel by kernel.

    prof = exe.profile(x, w, runs=20)      # compiles a profiled copy, runs it
    print(prof.table())                     # kernels by total time, with their share
    prof.write_trace("trace.json")          # one span per kernel call: open in Perfetto

On the CPU the times come from clock calls around each kernel
(xla-profile-kernels): a kernel is an op of the entry function that does work
after scheduling (a parallel region, a loop nest, a copy, a call of an
outlined kernel); its name is its source location and the fusion
``exe.fusion_report()`` lists there (``<input>:3:8 fusion 0: dot_general,
tanh``), or the op where the report has none or several. On a GPU (target
"cuda") they come from CUDA events recorded on the stream around each launch
and device copy (``xlac.targets.cuda.event_clock``): a kernel is named as its
``gpu.func`` in the "kernels" stage, a copy as ``memcpy ...``, and the host's
read-backs of loop predicates are counted.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelTime:
    name: str
    calls: int
    total_ms: float
    share: float                 # of all kernels' time

    @property
    def mean_ms(self) -> float:
        """One launch's time, on average."""
        return self.total_ms / max(self.calls, 1)


class Profile:
    """The kernel times of ``runs`` calls of a profiled executable."""

    def __init__(self, names: list[str], events: list[tuple[int, int, int]], runs: int,
                 wall_ms: float, read_backs: int | None = None, track: str = ""):
        self.names = names
        self.events = events
        self.runs = runs
        self.wall_ms = wall_ms           # median wall time of one call, clock calls included
        self.read_backs = read_backs     # host reads of device scalars over the runs (cuda)
        self.track = track               # the trace's one thread, named ("GPU stream")

    def kernels(self) -> list[KernelTime]:
        """Every kernel that ran, slowest (by total time over the runs) first."""
        totals: dict[int, list] = {}
        for kernel, start, end in self.events:
            entry = totals.setdefault(kernel, [0, 0])
            entry[0] += 1
            entry[1] += end - start
        overall = sum(ns for _, ns in totals.values()) or 1
        rows = [KernelTime(self.names[k], calls, ns / 1e6, ns / overall)
                for k, (calls, ns) in totals.items()]
        return sorted(rows, key=lambda row: -row.total_ms)

    def table(self, top: int = 15) -> str:
        rows = self.kernels()
        lines = [f"{len(rows)} kernels, {self.runs} runs, {self.wall_ms:.3f} ms per call (median)"]
        if self.read_backs:
            lines.append(f"{self.read_backs / self.runs:g} host read-backs per call "
                         "(loop predicates and branch indices)")
        lines.append(f"{'ms/call':>9}  {'share':>6}  {'calls':>6}  {'mean us':>9}  kernel")
        lines += [f"{row.total_ms / self.runs:9.3f}  {100 * row.share:5.1f}%  {row.calls:6d}  "
                  f"{1e3 * row.mean_ms:9.2f}  {row.name}" for row in rows[:top]]
        if len(rows) > top:
            rest = rows[top:]
            lines.append(f"{sum(r.total_ms for r in rest) / self.runs:9.3f}  "
                         f"{100 * sum(r.share for r in rest):5.1f}%  "
                         f"{sum(r.calls for r in rest):6d}  {'':9}  ({len(rest)} more)")
        return "\n".join(lines) + "\n"

    def chrome_trace(self) -> dict:
        """Trace-event JSON: one span per kernel call (open in https://ui.perfetto.dev)."""
        origin = min((start for _, start, _ in self.events), default=0)
        events = [{"name": "process_name", "ph": "M", "pid": os.getpid(),
                   "args": {"name": "xlac kernels"}}]
        if self.track:
            events.append({"name": "thread_name", "ph": "M", "pid": os.getpid(), "tid": 0,
                           "args": {"name": self.track}})
        events += [{"name": self.names[k], "cat": _category(self.names[k]), "ph": "X", "pid": os.getpid(),
                    "tid": 0, "ts": (start - origin) / 1e3, "dur": (end - start) / 1e3}
                   for k, start, end in self.events]
        return {"traceEvents": events, "displayTimeUnit": "ms"}

    def write_trace(self, path) -> None:
        with open(path, "w") as handle:
            json.dump(self.chrome_trace(), handle)


def named_after_fusions(profile: Profile, fused_module) -> Profile:
    """Each kernel named after the fusion ``exe.fusion_report()`` lists at its
    location (``<input>:3:8 fusion 0: dot_general, tanh``) rather than after the
    op that runs it after scheduling (the call of an outlined kernel, a parallel
    region), which says nothing of what it computes. A location that several
    kernels of the report share keeps the op's name."""
    from xlac.debug.kernels import kernels
    labels: dict[str, set[str]] = {}
    for kernel in kernels(fused_module):
        label = f"{kernel.title}: {kernel.op_names}" if kernel.is_fusion else kernel.title
        labels.setdefault(kernel.location, set()).add(label)
    names = []
    for name in profile.names:
        location, _, _ = name.partition(" ")
        found = labels.get(location, ())
        names.append(f"{location} {next(iter(found))}" if len(found) == 1 else name)
    profile.names = names
    return profile


def _category(name: str) -> str:
    """A span's category in the trace: the cuda target's copies apart from its kernels."""
    return "copy" if name.startswith("memcpy ") else "kernel"


def profile_calls(exe, arrays, runs: int) -> Profile:
    """Run a profiled executable ``runs`` times (after one warm-up call)."""
    import time
    clock = getattr(exe.function, "clock", None)
    if clock is None:
        raise ValueError("this executable was not compiled with a kernel clock")
    exe.run(*arrays)
    clock.clear()
    walls = []
    for _ in range(max(1, runs)):
        start = time.perf_counter()
        exe.run(*arrays)
        walls.append(time.perf_counter() - start)
    walls.sort()
    return Profile(clock.names, list(clock.events), len(walls), 1e3 * walls[len(walls) // 2],
                   getattr(clock, "read_backs", None), getattr(clock, "track", ""))
