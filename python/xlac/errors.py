"""Errors xlac raises, and diagnostics: records made once, formatted in one place.

Every message a user sees is an MLIR-style diagnostic,
``file:line:col: error: what is wrong``, followed where we can by a note
saying what to try next. A ``Diagnostic`` is a record (location, severity,
message, notes); errors carry records, and ``str()`` formats them.
"""

from __future__ import annotations

import contextlib
import re

from xlac.record import record

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:                 # the bindings load on first use: a cache hit needs none
    from xlac.mlir import ir

_FILE_LOC = re.compile(r'"([^"]*)":(\d+):(\d+)')
UNKNOWN = "<unknown>"


@record                             # a frozen dataclass, without importing dataclasses
class Diagnostic:
    """One diagnostic: where (``file:line:col``, ``<unknown>`` or empty), how bad, what."""

    location: str
    severity: str              # error, warning, remark, note
    message: str
    notes: tuple[Diagnostic, ...] = ()

    def lines(self) -> list[str]:
        """This diagnostic and its notes, one formatted line each."""
        return [_line(self)] + [_line(note) for note in self.notes]

    def __str__(self) -> str:
        return _line(self)


def _line(diag: Diagnostic) -> str:
    if not diag.location:
        return f"{diag.severity}: {diag.message}"
    return f"{diag.location}: {diag.severity}: {diag.message}"


def error(message: str, location: str = UNKNOWN) -> Diagnostic:
    return Diagnostic(location, "error", message)


def parse_line(line: str) -> Diagnostic:
    """A formatted line read back as a record (diagnostics printed by MLIR itself)."""
    for severity in ("error", "warning", "remark", "note"):
        head, marker, message = line.partition(f": {severity}: ")
        if marker:
            return Diagnostic(head, severity, message)
        if line.startswith(f"{severity}: "):
            return Diagnostic("", severity, line[len(severity) + 2:])
    return Diagnostic(UNKNOWN, "error", line)


class XlacError(Exception):
    """Base class of the errors xlac raises on purpose."""


class CompileError(XlacError):
    """The program could not be compiled; ``records`` (and ``diagnostics``, as lines) say why.

    ``CompileError("no stage 'x'", hint)`` is an error at an unknown
    location; pass ``Diagnostic`` records (or formatted lines) for more.
    """

    def __init__(self, diagnostics: list | str | Diagnostic, hint: str = ""):
        if isinstance(diagnostics, (str, Diagnostic)):
            diagnostics = [diagnostics]
        self.records = [_as_record(d) for d in diagnostics]
        self.hint = hint
        super().__init__("\n".join(self.diagnostics + ([f"note: {hint}"] if hint else [])))

    @property
    def diagnostics(self) -> list[str]:
        return [line for record in self.records for line in record.lines()]

    def with_note(self, note: str) -> CompileError:
        """The same error (same class) with one more note line."""
        return type(self)(self.records + [Diagnostic("", "note", note)], self.hint)

    def with_hint(self, hint: str) -> CompileError:
        return type(self)(self.records, hint)


def _as_record(item) -> Diagnostic:
    if isinstance(item, Diagnostic):
        return item
    if ": " in item and any(f"{s}: " in item for s in ("error", "warning", "remark", "note")):
        return parse_line(item)
    return error(item)


class UnsupportedOpError(CompileError):
    """The program uses ops (or types) a target cannot compile; every one is listed."""


class ResourceLimitError(CompileError):
    """The program's buffers cannot fit in this machine's memory: the sizes
    are in the message; not a compiler bug."""


class DisabledPassError(CompileError):
    """A pass the program needs was disabled (``--disable-passes``,
    ``XLAC_DISABLE_PASSES``): the user's setting, not a compiler bug."""


class NotLoweredError(CompileError):
    """Ops were left unlowered: a compiler bug, unless passes were disabled
    (the compile says which, knowing the options)."""


class InputError(XlacError, ValueError):
    """The arguments given to an executable do not match its signature."""


class ToolError(XlacError):
    """Bad command-line input to one of the xla-* tools."""


def format_location(loc: ir.Location | str) -> str:
    """``file:line:col`` of the first file position in a location, if any."""
    match = _FILE_LOC.search(_text(loc))
    if not match:
        return UNKNOWN
    name, line, col = match.groups()
    return f"{name}:{line}:{col}"


def _text(value) -> str:
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a location that cannot print (bad UTF-8) names nothing
        return ""


def _severity(value) -> str:
    from xlac.mlir import ir
    return {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning",
            ir.DiagnosticSeverity.NOTE: "note",
            ir.DiagnosticSeverity.REMARK: "remark"}.get(value, "error")


def record_of(diag) -> Diagnostic:
    """An MLIR diagnostic (and its notes) as a ``Diagnostic`` record.

    Any part that cannot be read (a message or file name that is not UTF-8:
    the bindings raise on reading it) is left out, never raised: this runs
    inside MLIR's diagnostic handler, where an exception would abort."""
    notes = tuple(Diagnostic(format_location(_read(n, "location")), "note",
                             _message(n)) for n in (_read(diag, "notes") or ()))
    return Diagnostic(format_location(_read(diag, "location")),
                      _severity(_read(diag, "severity")), _message(diag), notes)


def _read(diag, name: str):
    try:
        return getattr(diag, name)
    except Exception:  # noqa: BLE001 - the bindings' conversion errors have no one class
        return None


def _message(diag) -> str:
    text = _text(_read(diag, "message")) if _read(diag, "message") is not None else ""
    return text or "(a diagnostic whose text is not UTF-8)"


class DiagnosticCollector(list):
    """Collects every diagnostic emitted in a context while active: as lines
    (the list itself) and as records (``.records``)."""

    def __init__(self):
        super().__init__()
        self.records: list[Diagnostic] = []

    def __call__(self, diag) -> bool:
        try:
            record = record_of(diag)
        except Exception:  # noqa: BLE001 - raising here, inside MLIR, would abort the process
            record = error("(a diagnostic that could not be read)")
        self.records.append(record)
        self.extend(record.lines())
        return True


@contextlib.contextmanager
def collect_diagnostics(ctx: ir.Context):
    """Route the context's diagnostics into a collector instead of stderr."""
    collector = DiagnosticCollector()
    handle = ctx.attach_diagnostic_handler(collector)
    try:
        yield collector
    finally:
        handle.detach()


# What a bad input can make Python or the bindings raise deep inside a compile.
_RAW_FAILURES = (RuntimeError, ValueError, OverflowError, AttributeError, UnicodeError,
                 RecursionError, KeyError, IndexError, TypeError, AssertionError)


@contextlib.contextmanager
def as_compile_errors(source_name: str):
    """No raw exception leaves a compile: one that is not an xlac error becomes
    a CompileError naming the input (and what was raised), at the place MLIR
    gave, if it gave one."""
    try:
        yield
    except XlacError:
        raise
    except MemoryError:
        raise CompileError(error("out of memory while compiling this input", source_name),
                           "the program needs more memory than this process may use") from None
    except Exception as exc:
        if type(exc).__name__ == "MLIRError":         # the bindings' (not imported: a cache hit has none)
            raise compile_error_from(exc, [], _BUG_HINT) from None
        if isinstance(exc, _RAW_FAILURES):
            raise CompileError(error(f"xlac failed on this input: {type(exc).__name__}: "
                                     f"{_first_line(exc)}", source_name), _BUG_HINT) from exc
        raise


_BUG_HINT = "this is an xlac bug: please report it with the input program"


def compile_error_from(exc: Exception, collected, hint: str = "",
                       kind: type[CompileError] = CompileError) -> CompileError:
    """Turn an ``ir.MLIRError`` (or a pass failure) into a ``kind`` of CompileError."""
    records = list(getattr(collected, "records", [_as_record(line) for line in collected]))
    seen = {str(r) for r in records}
    for diag in _read(exc, "error_diagnostics") or []:
        record = record_of(diag)
        if str(record) not in seen:
            records.append(record)
            seen.add(str(record))
    if not records:
        records = [error(_first_line(exc))]
    return kind(records, hint)


def _first_line(exc: Exception) -> str:
    text = _text(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
