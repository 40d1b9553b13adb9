"""Seeing what the compiler does: dumps, per-pass times, reproducers,
bisecting by disabling passes, and a warning for large embedded constants.

    XLAC_DUMP_TO=/tmp/d python model.py   # /tmp/d/0000_jit_f/{input.mlir,pipeline.txt,
                                          #   003_inline.mlir, ..., fusion_graph.html, timing.txt}
    XLAC_TIMING=1 xla-run model.mlir      # per-pass wall times on stderr
    XLAC_DISABLE_PASSES=canonicalize,cse  # bisect a numerics difference
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from xlac.pipeline import pipelines
from xlac.dtypes import numpy_dtype, shape_str
from xlac.errors import CompileError, format_location
from xlac.mlir import ir
from xlac.pipeline.pass_manager import run_passes
from xlac.pipeline.text import parse_pipeline

# Every debugging switch, its environment variable and what it does.
ENVIRONMENT = {
    "XLAC_DUMP_TO": "directory: per compiled module, the input, the pipeline, the IR after "
                    "every pass, the fusion graph and the pass times",
    "XLAC_TIMING": "1: print per-pass wall times (like --mlir-timing) on stderr",
    "XLAC_DISABLE_PASSES": "comma-separated pass names to skip (bisecting numerics)",
    "XLAC_LARGE_CONSTANT_BYTES": "warn about constants at least this big (default 1 MiB)",
    "XLAC_CACHE_DIR": "compilation cache directory (default ~/.cache/xlac; empty: no cache)",
}


# The fusion graph is drawn from the kernels xla-fuse made, else from linalg.
_GRAPH_STAGE = "fused" if "fused" in pipelines.CPU_STAGES else "linalg"


class LargeConstantWarning(UserWarning):
    """The program embeds big constants: slow compiles and big artifacts."""


@dataclass(frozen=True)
class DebugOptions:
    dump_to: str = ""                       # XLAC_DUMP_TO
    timing: bool = False                    # XLAC_TIMING
    disable_passes: tuple[str, ...] = ()    # XLAC_DISABLE_PASSES, --disable-passes
    large_constant_bytes: int = 1 << 20     # XLAC_LARGE_CONSTANT_BYTES

    @classmethod
    def from_env(cls, disable_passes=(), timing: bool | None = None) -> "DebugOptions":
        env = os.environ
        disabled = tuple(disable_passes) or tuple(
            p for p in env.get("XLAC_DISABLE_PASSES", "").split(",") if p.strip())
        return cls(env.get("XLAC_DUMP_TO", ""),
                   bool(timing) if timing is not None else env.get("XLAC_TIMING", "") not in ("", "0"),
                   tuple(p.strip() for p in disabled),
                   int(env.get("XLAC_LARGE_CONSTANT_BYTES", "") or 1 << 20))

    @property
    def stepwise(self) -> bool:
        """Run one pass at a time (to dump or time each)."""
        return bool(self.dump_to) or self.timing


def without_passes(steps: list[str], disabled: tuple[str, ...]) -> list[str]:
    """``steps`` minus every element named in ``disabled``, nested ones too."""
    if not disabled:
        return steps
    kept = []
    for step in steps:
        elements = _drop(parse_pipeline(step), set(disabled))
        kept += [e.text() for e in elements]
    return kept


def _drop(elements, names):
    kept = []
    for element in elements:
        if element.name in names:
            continue
        if element.children is not None:
            element.children = _drop(element.children, names)
            if not element.children:
                continue
        kept.append(element)
    return kept


def check_disabled(disabled: tuple[str, ...], pipeline: list[str]) -> None:
    """A misspelt name would silently disable nothing: refuse it."""
    present = set(pass_names(pipeline))
    unknown = [name for name in disabled if name not in present]
    if unknown:
        raise CompileError(f"<unknown>: error: cannot disable {', '.join(unknown)}: not in the "
                           "pipeline", "passes: " + ", ".join(sorted(present)))


def pass_names(steps: list[str]) -> list[str]:
    names = []
    def visit(elements):
        for element in elements:
            names.append(element.name)
            visit(element.children or [])
    for step in steps:
        visit(parse_pipeline(step))
    return names


class CompileSession:
    """Runs the pipeline stage by stage for one compile, with the debugging
    the options ask for; writes a reproducer if anything fails."""

    def __init__(self, data: bytes, source_name: str, entry: str, options: DebugOptions):
        self.data, self.source_name, self.entry = data, source_name, entry
        self.options = options
        self.pipeline: list[str] = []
        self.times: list[tuple[str, str, float]] = []    # stage, pass, seconds
        self.directory: Path | None = None
        self.failed_step = ""              # set when a pass fails in stepwise mode
        self.last_text = ""                # the IR before that pass, when dumping
        self._counter = 0

    def start(self, module: ir.Module) -> None:
        warn_large_constants(module, self.options.large_constant_bytes)
        if self.options.dump_to:
            self.directory = new_dump_directory(Path(self.options.dump_to),
                                                module_name(module, self.source_name))
            suffix = ".mlirbc" if self.data.startswith(b"ML\xefR") else ".mlir"
            (self.directory / f"input{suffix}").write_bytes(self.data)
            self.last_text = str(module)

    def run(self, module: ir.Module, stage: str, steps: list[str]) -> None:
        steps = without_passes(steps, self.options.disable_passes)
        self.pipeline += steps
        if self.options.stepwise:
            for step in steps:
                self._timed(stage, step, lambda s=step: self._one_step(module, s))
                self._write_step(module, step)
        else:
            self._timed(stage, stage, lambda: run_passes(module, steps))
        if stage == _GRAPH_STAGE and self.directory is not None:
            self._draw(module)

    def _draw(self, module: ir.Module) -> None:
        from xlac.debug.fusion_picture import write_fusion_graph
        try:
            write_fusion_graph(module, self.directory / "fusion_graph.html")
        except Exception as exc:  # noqa: BLE001 - a debugging aid must not fail the compile
            (self.directory / "fusion_graph.html").write_text(
                f"<!DOCTYPE html><p>could not draw the fusion graph: {exc!r}</p>\n")

    def jit(self, build, step: str = "llvm-jit (LLVM -O3)"):
        """``build()`` (the LLVM JIT, or PTX for cuda), timed, with a reproducer on failure."""
        return self._timed("machine code", step, build)

    def finish(self) -> None:
        report = timing_report(self.times)
        if self.directory is not None:
            (self.directory / "pipeline.txt").write_text(pipeline_text(self.pipeline) + "\n")
            (self.directory / "timing.txt").write_text(report)
        if self.options.timing:
            print(report, file=sys.stderr, end="")

    def _one_step(self, module, step: str) -> None:
        try:
            run_passes(module, [step])
        except CompileError:
            self.failed_step = step
            raise

    def _write_step(self, module, step: str) -> None:
        self._counter += 1
        if self.directory is not None:
            self.last_text = str(module)
            name = re.sub(r"[^\w.-]", "_", _innermost(step))[:80]
            (self.directory / f"{self._counter:03d}_{name}.mlir").write_text(self.last_text)

    def _timed(self, stage: str, name: str, action):
        start = time.perf_counter()
        try:
            result = action()
        except CompileError as error:
            self.times.append((stage, name + " (failed)", time.perf_counter() - start))
            self.finish()
            raise self._with_reproducer(error) from None
        self.times.append((stage, name, time.perf_counter() - start))
        return result

    def _with_reproducer(self, error: CompileError) -> CompileError:
        errors = [line for line in error.diagnostics if ": error: " in line]
        if errors and all("is not supported on" in line for line in errors):
            return error                   # a known gap (docs/op-support.md), not a failure
        try:
            where = write_reproducer(self)
        except OSError as exc:
            note = f"note: could not write a reproducer: {exc}"
        else:
            note = (f"note: reproducer written to {where}: xla-opt {where}/input.mlir "
                    f"--pass-pipeline=\"$(cat {where}/pipeline.txt)\"")
            if self.directory is None:
                note += " (XLAC_DUMP_TO=DIR also keeps the IR after every pass)"
        return CompileError(error.diagnostics + [note], error.hint)


def _innermost(step: str) -> str:
    elements = parse_pipeline(step)
    while elements and elements[0].children:
        elements = elements[0].children
    return elements[0].name if elements else step


def pipeline_text(steps: list[str]) -> str:
    return "builtin.module(" + ",".join(steps) + ")"


def write_reproducer(session: CompileSession) -> Path:
    """input.mlir + pipeline.txt (up to the failing stage) in a fresh directory."""
    text = pipeline_text(session.pipeline)
    if session.directory is not None:
        where = session.directory / "reproducer"
    else:
        digest = hashlib.sha256(session.data + text.encode()).hexdigest()[:16]
        where = Path(tempfile.gettempdir()) / f"xlac-reproducers-{os.getuid()}" / digest
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    (where / "input.mlir").write_bytes(session.data)
    (where / "pipeline.txt").write_text(text + "\n")
    if session.failed_step:
        (where / "failing_pass.txt").write_text(pipeline_text([session.failed_step]) + "\n")
    if session.failed_step and session.last_text:
        (where / "before_failing_pass.mlir").write_text(session.last_text)
    return where


def new_dump_directory(root: Path, name: str) -> Path:
    """``root/<nnnn>_<name>``, numbered in compile order, never reused."""
    root.mkdir(parents=True, exist_ok=True)
    taken = [int(p.name[:4]) for p in root.iterdir() if re.match(r"\d{4}_", p.name)]
    number = max(taken, default=-1) + 1
    while True:
        path = root / f"{number:04d}_{name}"
        try:
            path.mkdir()
            return path
        except FileExistsError:       # another process took it
            number += 1


def module_name(module: ir.Module, source_name: str) -> str:
    if "sym_name" in module.operation.attributes:
        return ir.StringAttr(module.operation.attributes["sym_name"]).value
    stem = Path(source_name.strip("<>")).name.split(".")[0]
    return re.sub(r"[^\w-]", "_", stem) or "module"


def timing_report(times: list[tuple[str, str, float]]) -> str:
    """``--mlir-timing``'s layout: wall time per pass and per stage, and its share."""
    total = sum(seconds for _, _, seconds in times) or 1e-9
    stages: dict[str, float] = {}
    for stage, _, seconds in times:
        stages[stage] = stages.get(stage, 0.0) + seconds
    bar = "===" + "-" * 73 + "==="
    lines = [bar, "xlac compile time report".center(79), bar,
             f"  Total Execution Time: {total:.4f} seconds", "",
             "  ----Wall Time----  ----Pass----"]
    lines += [_time_line(seconds, total, name) for _, name, seconds in times]
    lines += [_time_line(total, total, "Total"), "", "  ----Wall Time----  ----Stage----"]
    lines += [_time_line(seconds, total, stage) for stage, seconds in stages.items()]
    return "\n".join(lines) + "\n"


def _time_line(seconds: float, total: float, name: str) -> str:
    return f"  {seconds:8.4f} ({100 * seconds / total:5.1f}%)  {name}"


def warn_large_constants(module: ir.Module, threshold: int) -> None:
    """One warning naming the biggest constant and the total over ``threshold``."""
    found = []
    def visit(op):
        if op.name.endswith(".constant") and len(op.results) == 1:
            size = _constant_bytes(op, threshold)
            if size >= threshold:
                found.append((size, op))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    if not found:
        return
    size, op = max(found, key=lambda item: item[0])
    shaped = ir.ShapedType(op.results[0].type)
    kind = shape_str(numpy_dtype(str(shaped.element_type)), tuple(shaped.shape))
    warnings.warn(f"{format_location(op.location)}: the program embeds {len(found)} large "
                  f"constant(s), {_size(sum(s for s, _ in found))} in all (the largest: "
                  f"{kind}, {_size(size)}); compile time and artifact size grow with "
                  "them: pass them as arguments instead", LargeConstantWarning,
                  stacklevel=_caller_level())


def _constant_bytes(op, threshold: int) -> int:
    """Bytes the constant's value takes in the program (0 for a splat)."""
    try:
        shaped = ir.ShapedType(op.results[0].type)
        itemsize = numpy_dtype(str(shaped.element_type)).itemsize
    except (ValueError, TypeError):
        return 0                                   # not a tensor of a numpy type
    if not shaped.has_static_shape:
        return 0
    size = math.prod(shaped.shape) * itemsize
    return 0 if size >= threshold and _is_splat(op) else size


def _is_splat(op) -> bool:
    try:
        value = op.attributes["value"]
        return isinstance(value, ir.DenseElementsAttr) and value.is_splat
    except (TypeError, ValueError, KeyError):     # e.g. complex elements: no Python class
        return False


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside xlac: the warning then
    points at (and is shown once per) the user's call, not xlac's code."""
    package = str(Path(__file__).resolve().parent)
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level

