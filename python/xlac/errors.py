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
    return [str(record) for record in diagnostics_of(diag)]


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic, already formatted: where, how bad, and what."""

    location: str          # file:line:col
    severity: str          # error, warning, remark, note
    message: str

    def __str__(self) -> str:
        if not self.location:
            return f"{self.severity}: {self.message}"
        return f"{self.location}: {self.severity}: {self.message}"


def diagnostics_of(diag) -> list[Diagnostic]:
    """An MLIR diagnostic and its notes as ``Diagnostic`` records."""
    records = [Diagnostic(format_location(diag.location),
                          _SEVERITY.get(diag.severity, "error"), str(diag.message))]
    for note in diag.notes:
        records.append(Diagnostic(format_location(note.location), "note", str(note.message)))
    return records


class DiagnosticCollector(list):
    """Collects every diagnostic emitted in a context while active."""

    def __call__(self, diag) -> bool:
        self.extend(str(record) for record in diagnostics_of(diag))
        self.records.extend(diagnostics_of(diag))
        return True

    def __init__(self):
        super().__init__()
        self.records: list[Diagnostic] = []


@contextlib.contextmanager
def collect_diagnostics(ctx: ir.Context):
    """Route the context's diagnostics into a list (of lines) instead of stderr.

    The list also has ``.records``: the same diagnostics as ``Diagnostic``.
    """
    collector = DiagnosticCollector()
    handle = ctx.attach_diagnostic_handler(collector)
    try:
        yield collector
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
