"""Errors xlac raises, and the formatting of MLIR diagnostics.

Every message a user sees is an MLIR-style diagnostic,
``file:line:col: error: what is wrong``, followed where we can by a line
saying what to try next.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

from xlac.mlir import ir

_FILE_LOC = re.compile(r'"([^"]*)":(\d+):(\d+)')


class XlacError(Exception):
    """Base class of the errors xlac raises on purpose."""


class CompileError(XlacError):
    """The program could not be compiled; ``diagnostics`` lists why."""

    def __init__(self, diagnostics: list[str] | str, hint: str = ""):
        if isinstance(diagnostics, str):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        self.hint = hint
        lines = self.diagnostics + ([f"note: {hint}"] if hint else [])
        super().__init__("\n".join(lines))


class InputError(XlacError, ValueError):
    """The arguments given to an executable do not match its signature."""


class ToolError(XlacError):
    """Bad command-line input to one of the xla-* tools."""


def format_location(loc: ir.Location | str) -> str:
    """``file:line:col`` of the first file position in a location, if any."""
    match = _FILE_LOC.search(str(loc))
    if not match:
        return "<unknown>"
    name, line, col = match.groups()
    return f"{name}:{line}:{col}"


_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


def format_diagnostic(diag) -> list[str]:
    """One diagnostic (and its notes) as ``file:line:col: severity: msg`` lines."""
    severity = _SEVERITY.get(diag.severity, "error")
    lines = [f"{format_location(diag.location)}: {severity}: {diag.message}"]
    for note in diag.notes:
        lines.append(f"{format_location(note.location)}: note: {note.message}")
    return lines


@dataclass
class DiagnosticCollector:
    """Collects every diagnostic emitted in a context while active."""

    lines: list[str]

    def __call__(self, diag) -> bool:
        self.lines.extend(format_diagnostic(diag))
        return True


@contextlib.contextmanager
def collect_diagnostics(ctx: ir.Context):
    """Route the context's diagnostics into a list instead of stderr."""
    collector = DiagnosticCollector([])
    handle = ctx.attach_diagnostic_handler(collector)
    try:
        yield collector.lines
    finally:
        handle.detach()


def compile_error_from(exc: Exception, collected: list[str], hint: str = "") -> CompileError:
    """Turn an ``ir.MLIRError`` (or a pass failure) into a CompileError."""
    lines = list(collected)
    for diag in getattr(exc, "error_diagnostics", []) or []:
        for line in format_diagnostic(diag):
            if line not in lines:
                lines.append(line)
    if not lines:
        lines = [f"<unknown>: error: {_first_line(exc)}"]
    return CompileError(lines, hint)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
