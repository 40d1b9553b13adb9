"""Seeing what the compiler does: dumps, per-pass times, traces, reproducers,
and a warning for large embedded constants. ``CompileReporter`` is the
observer ``xlac.compile`` gives its stage runner.

    XLAC_DUMP_TO=/tmp/d python model.py   # /tmp/d/0000_jit_f/{input.mlir,pipeline.txt,
                                          #   003_inline.mlir, ..., fusion_graph.html,
                                          #   timing.txt, trace.json, remarks.txt}
    XLAC_TIMING=1 xla-run model.mlir      # per-pass wall times on stderr
    XLAC_TRACE_TO=/tmp/t.json ...         # a Chrome trace of the compile (Perfetto)
    XLAC_DISABLE_PASSES=canonicalize,cse  # bisect a numerics difference
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path

from xlac.debug.timing import timing_report, write_trace
from xlac.dtypes import numpy_dtype, shape_str
from xlac.errors import (
    CompileError,
    ResourceLimitError,
    UnsupportedOpError,
    format_location,
)
from xlac.files import keep_newest
from xlac.mlir import ir
from xlac.options import Options
from xlac.pipeline.text import innermost_name, pipeline_text

# The fusion picture is drawn from the kernels xla-fuse made.
_GRAPH_STAGE = "fused"
MAX_REPRODUCERS = 16              # kept in the temp directory's shared folder, newest first


class LargeConstantWarning(UserWarning):
    """The program embeds big constants: slow compiles and big artifacts."""


class CompileReporter:
    """A runner's observer for one compile: the dump directory, the timing
    report and trace, and a reproducer when a pass fails."""

    def __init__(self, data: bytes, source_name: str, entry: str, options: Options):
        self.data, self.source_name, self.entry = data, source_name, entry
        self.options = options
        self.directory: Path | None = None
        self.last_text = ""                # the IR before the failing pass, when dumping
        self._counter = 0

    def started(self, module: ir.Module) -> None:
        warn_large_constants(module, self.options.large_constant_bytes)
        if self.options.dump_to:
            self.directory = new_dump_directory(Path(self.options.dump_to),
                                                module_name(module, self.source_name))
            suffix = ".mlirbc" if self.data.startswith(b"ML\xefR") else ".mlir"
            (self.directory / f"input{suffix}").write_bytes(self.data)
            self.last_text = str(module)

    def step_done(self, stage: str, step: str, module: ir.Module) -> None:
        self._counter += 1
        if self.directory is not None:
            self.last_text = str(module)
            name = re.sub(r"[^\w.-]", "_", innermost_name(step))[:80]
            (self.directory / f"{self._counter:03d}_{name}.mlir").write_text(self.last_text)

    def stage_done(self, stage: str, module: ir.Module) -> None:
        if stage == _GRAPH_STAGE and self.directory is not None:
            self._draw(module)

    def _draw(self, module: ir.Module) -> None:
        from xlac.debug.fusion_picture import write_fusion_graph
        try:
            write_fusion_graph(module, self.directory / "fusion_graph.html")
        except Exception as exc:  # noqa: BLE001 - a debugging aid must not fail the compile
            (self.directory / "fusion_graph.html").write_text(
                f"<!DOCTYPE html><p>could not draw the fusion graph: {exc!r}</p>\n")

    def finished(self, runner) -> None:
        report = timing_report(runner.times)
        if self.directory is not None:
            (self.directory / "pipeline.txt").write_text(pipeline_text(runner.pipeline) + "\n")
            (self.directory / "timing.txt").write_text(report)
            (self.directory / "remarks.txt").write_text(
                "".join(f"{remark}\n" for remark in runner.remarks))
            write_trace(self.directory / "trace.json", runner.times, self.source_name)
        if self.options.trace_to:
            write_trace(self.options.trace_to, runner.times, self.source_name)
        if self.options.timing:
            print(report, file=sys.stderr, end="")

    def failed(self, failure: CompileError, runner) -> CompileError:
        if isinstance(failure, (UnsupportedOpError, ResourceLimitError)):
            return failure                 # a known gap (docs/op-support.md) or too big: not a bug
        try:
            where = write_reproducer(self, runner)
        except OSError as exc:
            note = f"could not write a reproducer: {exc}"
        else:
            note = (f"reproducer written to {where}: xla-opt {where}/input.mlir "
                    f"--pass-pipeline=\"$(cat {where}/pipeline.txt)\"")
            if self.directory is None:
                note += " (XLAC_DUMP_TO=DIR also keeps the IR after every pass)"
        return failure.with_note(note)


def write_reproducer(reporter: CompileReporter, runner) -> Path:
    """input.mlir + pipeline.txt (up to the failing stage) in a fresh directory."""
    text = pipeline_text(runner.pipeline)
    if reporter.directory is not None:
        where = reporter.directory / "reproducer"
    else:
        digest = hashlib.sha256(reporter.data + text.encode()).hexdigest()[:16]
        where = Path(tempfile.gettempdir()) / f"xlac-reproducers-{os.getuid()}" / digest
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    if reporter.directory is None:      # the shared folder keeps the newest few, not all
        os.utime(where)
        keep_newest(where.parent, MAX_REPRODUCERS)
    (where / "input.mlir").write_bytes(reporter.data)
    (where / "pipeline.txt").write_text(text + "\n")
    if runner.failed_step:
        (where / "failing_pass.txt").write_text(pipeline_text([runner.failed_step]) + "\n")
    if runner.failed_step and reporter.last_text:
        (where / "before_failing_pass.mlir").write_text(reporter.last_text)
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
                  f"{kind}, {_size(size)}); artifacts carry them (and but for the cpu "
                  "target, compile time grows with them): pass them as arguments instead", LargeConstantWarning,
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

