"""Per-kernel profiles of xlac (``exe.profile``): the slowest kernels and a Chrome trace.

xlac names a kernel by its source location and op (``<input>:223:12 omp.parallel``); the
location is a line of the program text, so each name gets the StableHLO op written on
that line, its result type and the kernel's own kind (``L223 stablehlo.convolution ->
2x144x56x56xf32 [omp.parallel]``), which is what a reader looks for. The worker calls
``summarize`` (and writes the trace); the tables print ``KernelProfile``s. Pure Python: the worker imports it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_LOCATION = re.compile(r"^<input>:(\d+):(\d+)\s+(.*)$")
_OP = re.compile(r"\b((?:stablehlo|chlo|mhlo|func|arith|tensor)\.[a-z_]+)")
_RESULT = re.compile(r"(?:->|:)\s*\(?(tensor<[^>]*>)\)?\s*$")


@dataclass
class KernelProfile:
    """What the report shows of one program's profile."""

    kernels: int                                  # how many kernels ran
    runs: int
    wall_ms: float                                # median call with the clocks in
    top: list[tuple[str, float, float]] = field(default_factory=list)   # name, ms/call, share
    trace: str | None = None                      # the Chrome trace written, if any
    seconds: float = 0.0                          # profiling: the profiled compile and runs


def readable(name: str, lines: list[str]) -> str:
    """``L<line> <op at that line> -> <its result type>`` for a name that points into the
    program text; the name as it is otherwise."""
    found = _LOCATION.match(name)
    if not found or not 0 < int(found.group(1)) <= len(lines):
        return name
    number, kind = int(found.group(1)), found.group(3)
    line = lines[number - 1]
    column = max(int(found.group(2)) - 1, 0)
    op = _OP.search(line, column) or _OP.search(line)
    if op is None:
        return f"L{number} {kind}"
    result = _RESULT.search(line)
    shape = f" -> {result.group(1)[7:-1]}" if result else ""
    return f"L{number} {op.group(1)}{shape} [{kind}]"


def summarize(profile, source: str | bytes, top: int, trace_path: str | None,
              seconds: float, title: str = "xlac kernels") -> KernelProfile:
    """The ``top`` slowest kernels of an ``xlac.debug.profile.Profile``; the trace, with
    readable names (the original one kept in each event's args) and ``title`` as the
    process's name, written to ``trace_path``."""
    lines = source.splitlines() if isinstance(source, str) else []
    rows = profile.kernels()
    summary = KernelProfile(len(rows), profile.runs, profile.wall_ms, seconds=seconds,
                            top=[(readable(r.name, lines), r.total_ms / profile.runs, r.share)
                                 for r in rows[:top]])
    if trace_path:
        trace = profile.chrome_trace()
        for event in trace["traceEvents"]:
            if event.get("ph") == "X":
                event["args"] = {"kernel": event["name"]}
                event["name"] = readable(event["name"], lines)
            elif event.get("name") == "process_name":
                event["args"] = {"name": title}
        with open(trace_path, "w") as handle:
            json.dump(trace, handle)
        summary.trace = trace_path
    return summary


def cell(entry: tuple[str, float, float], width: int = 0) -> str:
    """``31.0% 1.23 ms L245 stablehlo.dot_general -> ...``, cut to ``width`` characters."""
    name, ms, share = entry
    text = f"{100 * share:.1f}% {_ms(ms)} ms {name}"
    return text if not width or len(text) <= width else text[:width - 3] + "..."


def _ms(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


CPU_TIMES = "share of all kernels' time, ms per call"
GPU_TIMES = "share of the program's GPU time, from CUDA events; ms per call"


def text_lines(results, top: int, times: str = CPU_TIMES) -> list[str]:
    """The terminal's view: per program, its kernel count and slowest ``top`` kernels
    (``times``: what the shares and times are, CPU_TIMES or GPU_TIMES)."""
    profiled = [r for r in results if r.profile is not None or r.profile_error]
    if not profiled:
        return []
    lines = ["", f"slowest xlac kernels (exe.profile; {times}):"]
    width = max(len(r.program.name) for r in profiled)
    for r in profiled:
        if r.profile is None:
            lines.append(f"{r.program.name.ljust(width)}  profile failed: {r.profile_error}")
            continue
        p = r.profile
        head = f"{r.program.name.ljust(width)}  {p.kernels} kernels, {_ms(p.wall_ms)} ms/call profiled"
        lines.append(head)
        lines += [f"{'':{width}}    {i}. {cell(entry, 110)}" for i, entry in enumerate(p.top, 1)]
    return lines


CPU_CLOCKS = ("From `exe.profile` in the xlac worker (clocks around every kernel): share of all "
              "kernels' time and ms per call; `L<n>` is the line of the StableHLO text.")
GPU_CLOCKS = ("From `exe.profile` in the xlac worker (CUDA events around every launch and device "
              "copy, launched one by one): share of the program's GPU time and ms per call; a "
              "kernel is named as its `gpu.func` in the \"kernels\" stage.")


def markdown_lines(results, top: int, clocks: str = CPU_CLOCKS) -> list[str]:
    profiled = [r for r in results if r.profile is not None or r.profile_error]
    if not profiled:
        return []
    ranks = [f"#{i}" for i in range(1, top + 1)]
    out = ["", "## Slowest xlac kernels", "", clocks, "",
           "| program | kernels | profiled ms/call | " + " | ".join(ranks) + " | trace |",
           "|---|---|---|" + "---|" * top + "---|"]
    for r in profiled:
        if r.profile is None:
            out.append(f"| {r.program.name} | - | - | profile failed: {_escape(r.profile_error)}"
                       + " | -" * top + " |")
            continue
        p = r.profile
        cells = [_escape(cell(e)) for e in p.top] + ["-"] * (top - len(p.top))
        trace = f"`{p.trace.rsplit('/', 1)[-1]}`" if p.trace else "-"
        out.append(f"| {r.program.name} | {p.kernels} | {_ms(p.wall_ms)} | " + " | ".join(cells)
                   + f" | {trace} |")
    return out


def _escape(text: str) -> str:
    return text.replace("|", "\\|")
