"""The isolated parser's answers: a CompileError as JSON and back, class and all."""

from __future__ import annotations

from xlac.errors import CompileError, Diagnostic, UnsupportedOpError

_KINDS = {kind.__name__: kind for kind in (CompileError, UnsupportedOpError)}


def error_header(failure: CompileError) -> dict:
    return {"ok": False, "kind": type(failure).__name__, "hint": failure.hint,
            "records": [_record(r) for r in failure.records]}


def error_from(header: dict) -> CompileError:
    kind = _KINDS.get(header.get("kind"), CompileError)
    return kind([_diagnostic(r) for r in header["records"]], header.get("hint", ""))


def _record(record: Diagnostic) -> dict:
    return {"location": record.location, "severity": record.severity,
            "message": record.message, "notes": [_record(n) for n in record.notes]}


def _diagnostic(fields: dict) -> Diagnostic:
    return Diagnostic(fields["location"], fields["severity"], fields["message"],
                      tuple(_diagnostic(n) for n in fields["notes"]))
