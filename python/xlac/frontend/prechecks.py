"""Cheap checks on program text before MLIR's parser sees it.

MLIR's parser recurses once per nested region, attribute or type, so text
nested thousands deep overflows its stack; and a type with absurd dimensions
makes it (or the verifier) allocate until LLVM aborts. Both are refused here,
in linear time, with a diagnostic at the place, before any parsing. The
isolated parser (``xlac.frontend.isolation``) still catches what these miss;
these make the common attacks a clean, fast error (and the only defence when
isolation is off).
"""

from __future__ import annotations

import re

import numpy as np

from xlac.errors import CompileError, error

# Far beyond real programs (a while in a while in a case is depth ~20 of
# brackets per level), far below what overflows the parser's stack.
MAX_NESTING = 400
# Elements of one tensor type: 2^40 (4 TiB of f32) is more than any machine
# compiles for; dimensions beyond int64 do not fit MLIR's shapes at all.
MAX_ELEMENTS = 1 << 40

_SHAPED = re.compile(rb"(?:tensor|memref|vector)<((?:[0-9?]+x)+)")
_HINT = "xlac refuses programs nested this deep or this large: check the input"


def check_text(data: bytes, source_name: str) -> None:
    """Raise a CompileError if the text ``data`` nests too deep or names an absurd shape."""
    if data.startswith(b"ML\xefR") or b"\0" in data[:64]:
        return                                     # bytecode: the isolated parser's job
    without_strings = _without_strings(data)
    _check_nesting(without_strings, source_name)
    _check_shapes(without_strings, source_name)


def text_without_blobs(module) -> bytes:
    """``module``'s text with large constants elided and no resource blobs: its
    header (attributes) and each operation printed alone. Printing the module
    whole walks every blob even where it elides them (3-4 s for 64 MB of weights
    on a loaded machine); printed alone, an operation has no resource section."""
    header = module.operation.get_asm(binary=True, large_elements_limit=16, skip_regions=True)
    return b"\n".join([header, *(op.operation.get_asm(binary=True, large_elements_limit=16)
                                  for op in module.body.operations)])


def _without_strings(data: bytes) -> bytes:
    """``data`` with each string literal (``"..."``, on one line, ``\\`` escaping
    the next character) replaced by ``""``, found with ``bytes.find``: a 90 MB
    hex blob of weights is a few memchr calls (a regex scanned it in 0.66 s;
    an alternation tried per character in 30 s)."""
    pieces, done, search = [], 0, 0
    while (start := data.find(b'"', search)) >= 0:
        end = _string_end(data, start + 1)
        if end < 0:                  # no string starts here (a newline came first)
            search = start + 1
            continue
        pieces += (data[done:start], b'""')
        done = search = end
    pieces.append(data[done:])
    return b"".join(pieces)


def _string_end(data: bytes, position: int) -> int:
    """Just past the quote that closes a string whose text starts at
    ``position``, or -1 where a newline (or the end) comes first."""
    while True:
        quote = data.find(b'"', position)
        stop = quote if quote >= 0 else len(data)
        newline = data.find(b"\n", position, stop)
        escape = data.find(b"\\", position, stop)
        if escape >= 0 and (newline < 0 or escape < newline):
            if escape + 1 >= len(data) or data[escape + 1] == ord("\n"):
                return -1
            position = escape + 2        # the escaped character, a quote or not
            continue
        return -1 if newline >= 0 or quote < 0 else quote + 1


def _lookup() -> np.ndarray:
    table = np.zeros(256, dtype=np.int32)
    for opener, closer in (b"{}", b"()", b"[]", b"<>"):
        table[opener], table[closer] = 1, -1
    return table


_DEPTH_STEP = _lookup()


def _check_nesting(text: bytes, source_name: str) -> None:
    text = text.replace(b"->", b"  ")               # the arrow of function types is no closer
    if len(text) == 0:
        return
    depth = np.cumsum(_DEPTH_STEP[np.frombuffer(text, dtype=np.uint8)], dtype=np.int64)
    too_deep = depth > MAX_NESTING
    if too_deep.any():
        where = _location(text, int(too_deep.argmax()), source_name)
        raise CompileError(error(f"the input nests brackets, regions or types more than "
                                 f"{MAX_NESTING} deep", where), _HINT)


def _check_shapes(text: bytes, source_name: str) -> None:
    for match in _SHAPED.finditer(text):
        elements = 1
        for dim in match.group(1).split(b"x")[:-1]:
            if dim == b"?":
                continue
            elements *= int(dim) if len(dim) < 40 else MAX_ELEMENTS + 1
            if elements > MAX_ELEMENTS:
                where = _location(text, match.start(), source_name)
                raise CompileError(error(f"a shape with more than 2^40 elements: "
                                         f"{match.group(0)[:80].decode(errors='replace')}...",
                                         where), _HINT)


def _location(text: bytes, offset: int, source_name: str) -> str:
    """``file:line:col`` of ``offset`` (strings were replaced by ``""`` on the same lines)."""
    line = text.count(b"\n", 0, offset) + 1
    column = offset - (text.rfind(b"\n", 0, offset) + 1) + 1
    return f"{source_name}:{line}:{column}"
