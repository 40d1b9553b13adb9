"""``--verify-diagnostics``: check ``// expected-error @+1 {{...}}`` lines.

Same spelling as mlir-opt: ``expected-error|warning|remark|note``, an
optional ``@+N``, ``@-N``, ``@above`` or ``@below`` line offset, and
``{{substring}}``. Every expected diagnostic must be produced and every
produced one must be expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlac.errors import Diagnostic

_EXPECTED = re.compile(
    r"expected-(error|warning|remark|note)\s*(@(?:[+-]\d+|above|below))?\s*\{\{(.*?)\}\}")
_LINE = re.compile(r":(\d+):\d+$")


@dataclass
class Expectation:
    severity: str
    line: int
    substring: str
    written_at: int
    met: bool = False


def parse_expectations(text: str) -> list[Expectation]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for severity, offset, substring in _EXPECTED.findall(line):
            found.append(Expectation(severity, _target_line(number, offset), substring, number))
    return found


def _target_line(line: int, offset: str) -> int:
    if not offset:
        return line
    if offset == "@above":
        return line - 1
    if offset == "@below":
        return line + 1
    return line + int(offset[1:])


def verify(text: str, produced: list[Diagnostic], file_name: str) -> list[str]:
    """Error lines for every mismatch between expectations and ``produced``."""
    expectations = parse_expectations(text)
    problems = []
    for diag in produced:
        if not _meet(diag, expectations) and diag.severity != "note":
            problems.append(f"{diag.location}: error: unexpected {diag.severity}: {diag.message}")
    for exp in expectations:
        if not exp.met:
            problems.append(f"{file_name}:{exp.written_at}:1: error: expected {exp.severity} "
                            f"\"{exp.substring}\" was not produced (on line {exp.line})")
    return problems


def _meet(diag: Diagnostic, expectations: list[Expectation]) -> bool:
    match = _LINE.search(diag.location)
    line = int(match.group(1)) if match else -1
    for exp in expectations:
        if not exp.met and exp.severity == diag.severity and exp.line == line \
                and exp.substring in diag.message:
            exp.met = True
            return True
    return False
