"""Results, and the table they make: plain text for the terminal, Markdown for docs/."""

from __future__ import annotations

import datetime
import importlib.metadata
import math
import os
import platform
import subprocess
from dataclasses import dataclass, field

from kernels import KernelProfile, markdown_lines, text_lines
from programs import REPO, Program, roofline_ms
from timing import Stats, stats

BACKENDS = ("xlac", "XLA", "numpy")
SUSPECT_ERROR = 1e-3    # outputs further than this from the reference count as wrong
# ... unless an output has fewer mantissa bits: a few of its ulps (bf16: 2^-8)
_SUSPECT_BY_DTYPE = {"bfloat16": 2e-2, "float16": 4e-3}


def suspect_error(program: Program) -> float:
    """The error past which ``program``'s outputs count as wrong: its least precise output's,
    or the program's own ``tolerance`` where it has one (gpu/sized.py: XLA's TF32 dots)."""
    own = getattr(program, "tolerance", None)
    if own is not None:
        return own
    return max((_SUSPECT_BY_DTYPE.get(spec.dtype, SUSPECT_ERROR) for spec in program.outputs),
               default=SUSPECT_ERROR)


@dataclass
class BackendResult:
    """One backend on one program."""

    compile_s: float | None = None
    times: list[float] = field(default_factory=list)
    error: str | None = None        # why there are no (or fewer) times
    slow: bool = False              # the first call took longer than the per-call limit
    check: float | None = None      # max relative error against the reference outputs

    @property
    def stats(self) -> Stats | None:
        return stats(self.times)


@dataclass
class ProgramResult:
    program: Program
    backends: dict[str, BackendResult]
    flops: float | None = None
    reference: str | None = None    # whose outputs the checks compare with
    profile: KernelProfile | None = None     # xlac's slowest kernels (run.py --profile)
    profile_error: str | None = None

    @property
    def roofline_ms(self) -> float:
        return roofline_ms(self.flops, self.program.nbytes)

    def median(self, name: str) -> float | None:
        result = self.backends.get(name)
        found = result.stats if result else None
        return found.median if found else None

    def agrees(self, name: str) -> bool:
        """False when the outputs were checked and are wrong: a fast wrong answer is no win."""
        result = self.backends.get(name)
        return result is None or result.check is None or result.check <= suspect_error(self.program)

    def ratio(self, name: str, base: str = "XLA") -> float | None:
        top, bottom = self.median(name), self.median(base)
        return top / bottom if top and bottom else None


HEADER = ("program", "xlac ms", "XLA ms", "numpy ms", "xlac/XLA", "roofline ms",
          "xlac %roof", "XLA %roof", "compile xlac s", "compile XLA s", "xlac err",
          "numpy err", "calls x/X/n")


def rows(results: list[ProgramResult], notes: list[str]) -> list[tuple[str, ...]]:
    """One row per program; failures become numbered notes."""
    return [_row(r, notes) for r in results]


def _row(r: ProgramResult, notes: list[str]) -> tuple[str, ...]:
    times = tuple(_time_cell(r, name, notes) for name in BACKENDS)
    roof = r.roofline_ms
    star = "" if r.program.flops is not None else "*"
    return (r.program.name, *times, _num(r.ratio("xlac")), _ms(roof) + star,
            _percent(roof, r.median("xlac")), _percent(roof, r.median("XLA")),
            _compile(r, "xlac"), _compile(r, "XLA"), _err(r, "xlac"), _err(r, "numpy"),
            "/".join(str(len(r.backends[n].times)) if n in r.backends else "-"
                     for n in BACKENDS))


def _time_cell(r: ProgramResult, name: str, notes: list[str]) -> str:
    result = r.backends.get(name)
    if result is None:
        return "n/a"
    found = result.stats
    mark = ""
    if result.error:
        notes.append(f"{name} on {r.program.name}: {result.error}")
        mark = f" [{len(notes)}]"
    if found is None:
        return "FAIL" + mark
    if result.slow:
        return f"{_ms(found.median)} (1 call, slow){mark}"
    if found.count < 3:
        return f"{_ms(found.median)} (n={found.count}){mark}"
    return f"{_ms(found.median)} [{_ms(found.p10)}-{_ms(found.p90)}]{mark}"


def _ms(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 1 else f"{value:.3f}"


def _num(value: float | None) -> str:
    return "-" if value is None else _ms(value)


def _percent(roof: float, median: float | None) -> str:
    return "-" if not median else f"{100 * roof / median:.1f}%"


def _compile(r: ProgramResult, name: str) -> str:
    result = r.backends.get(name)
    return "-" if result is None or result.compile_s is None else f"{result.compile_s:.2f}"


def _err(r: ProgramResult, name: str) -> str:
    result = r.backends.get(name)
    if result is None or result.check is None:
        return "-"
    return f"{result.check:.1e}"


def geomean(results: list[ProgramResult], name: str, base: str = "XLA") -> tuple[float | None, int]:
    ratios = [x for x in (r.ratio(name, base) for r in results if r.agrees(name)) if x]
    if not ratios:
        return None, 0
    return math.exp(sum(math.log(x) for x in ratios) / len(ratios)), len(ratios)


GROUPS = {"model": "real models", "suite": "bench programs", "extra": "programs from files"}


def summary_lines(results: list[ProgramResult]) -> list[str]:
    """Geometric means over all programs, or per group (real models, bench programs, ...)
    when the run has more than one."""
    groups = [g for g in GROUPS if any(r.program.group == g for r in results)]
    if len(groups) < 2:
        return _means(results, "")
    lines = []
    for group in groups:
        lines += _means([r for r in results if r.program.group == group], f", {GROUPS[group]}")
    return lines


def _means(results: list[ProgramResult], label: str) -> list[str]:
    lines = []
    for name in ("xlac", "numpy"):
        if name == "numpy" and not any("numpy" in r.backends for r in results):
            continue
        value, count = geomean(results, name)
        shown = "-" if value is None else f"{value:.2f}"
        lines.append(f"geometric mean {name}/XLA{label}: {shown} (over {count} of {len(results)} "
                     "programs; wrong outputs left out)")
    return lines


def text_table(results: list[ProgramResult], kernels: int = 0) -> str:
    notes: list[str] = []
    body = rows(results, notes)
    tail = summary_lines(results) + _footnotes(results, notes)
    return aligned(HEADER, body, tail + (text_lines(results, kernels) if kernels else []))


def aligned(header: tuple[str, ...], body: list, tail: list[str]) -> str:
    """A plain-text table: columns padded to their widest cell, then ``tail``'s lines."""
    table = [header, *body]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + [""] + tail)


def markdown(results: list[ProgramResult], method: list[str], versions: dict[str, str],
             kernels: int = 0) -> str:
    notes: list[str] = []
    body = rows(results, notes)
    out = ["# xlac performance\n",
           f"Generated by `bench/run.py` on {datetime.date.today().isoformat()}.\n",
           f"- machine: {machine()}", *markdown_body(versions, method, HEADER, body)]
    out += summary_lines(results) + _footnotes(results, notes)
    described = [r.program for r in results if r.program.description]
    if described:
        out += ["", "Real models:", ""] + [f"- `{p.name}`: {p.description}" for p in described]
    if kernels:
        out += markdown_lines(results, kernels)
    return "\n".join(out) + "\n"


def markdown_body(versions: dict[str, str], method: list[str], header: tuple[str, ...],
                  body: list) -> list[str]:
    """The versions and method as a list, then the table: the part of a section
    both targets' tables share."""
    return ["- versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
            *[f"- {line}" for line in method], "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" for _ in header) + "|",
            *["| " + " | ".join(row) + " |" for row in body], ""]


def _footnotes(results: list[ProgramResult], notes: list[str]) -> list[str]:
    lines = [f"[{i}] {note}" for i, note in enumerate(notes, 1)]
    if any(r.program.flops is None for r in results):
        lines.append("* roofline from XLA's cost-analysis FLOPs (program not in the manifest)")
    return [""] + lines if lines else []


def machine() -> str:
    cpus = len(os.sched_getaffinity(0))
    model, avx512 = "unknown CPU", False
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name") and model == "unknown CPU":
                    model = line.split(":", 1)[1].strip()
                avx512 |= line.startswith("flags") and " avx512f" in line
    except OSError:
        pass
    masked = os.environ.get("XLAC_CPUID_MASK")     # set by cpu_mask.reexec_masked
    seen = f", CPUID masked to {masked} for every library" if masked else ""
    return (f"{model}, nproc {cpus} (of {os.cpu_count()}), AVX-512 {'yes' if avx512 else 'no'}"
            f"{seen}, {platform.system()} {platform.machine()}")


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("xlac", "torch-mlir", "jax", "jaxlib", "numpy"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "absent"
    found["xlac"] += _git_revision()
    return found


def _git_revision() -> str:
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return f" (git {head}{' + local changes' if dirty else ''})" if head else ""
