"""``--split-input-file``: one file, many cases, separated by ``// -----``.

Each chunk is padded with the newlines that precede it, so that line
numbers in diagnostics are those of the original file (as in mlir-opt).
"""

from __future__ import annotations

import re

_SEPARATOR = re.compile(r"^// -----.*$", re.MULTILINE)
OUTPUT_SEPARATOR = "// -----\n"


def split_chunks(text: str) -> list[str]:
    """The chunks of ``text``, each keeping its original line numbers."""
    chunks, start = [], 0
    for match in _SEPARATOR.finditer(text):
        chunks.append(_pad(text, start, match.start()))
        start = match.end()
    chunks.append(_pad(text, start, len(text)))
    return chunks


def _pad(text: str, start: int, end: int) -> str:
    return "\n" * text.count("\n", 0, start) + text[start:end]
