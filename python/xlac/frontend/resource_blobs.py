"""Weights in a program's text read apart from its code.

Exporters that keep weights in the program (torch-mlir, IREE's importers)
write them as ``dense_resource<name>`` constants whose bytes sit in the
text's trailing ``{-# dialect_resources: { builtin: { name: "0x..." } } #-}``
section, as hex: a torchvision ResNet-18 is 94 MB of text for 47 MB of
weights and 40 KB of code. MLIR's parser reads that hex at about 100 MB/s,
and the isolated parser (``xlac.frontend.isolation``) then wrote the bytes
into its bytecode answer, which crossed a pipe and was parsed again: 2.2 s of
a 14 s compile, where the same program with its weights as arguments parses
in 0.02 s.

Here the section is cut off before anything parses the text: its hex is
decoded by ``binascii`` (C, a few hundred MB/s, and nothing in it can hurt
the process), the code alone goes to the parser, and each constant then gets
its bytes back as a resource blob this process owns. Line and column numbers
are unchanged: the section is the end of the text. Anything not in the plain
form (another dialect's resources, a quoted key, a handle used outside a
``stablehlo.constant``) leaves the text whole, parsed as before.
"""

from __future__ import annotations

import binascii
import re

import numpy as np

from xlac.errors import CompileError, error
from xlac.mlir import ir
from xlac.record import record
from xlac.signature import CONSTANT_ALIGNMENT, aligned_copy

# Below this many bytes of section, MLIR's own parse is quicker than the detour.
MIN_SECTION_BYTES = 1 << 20

_HEAD = re.compile(rb"\{-#\s*dialect_resources\s*:\s*\{\s*builtin\s*:\s*\{")
_KEY = re.compile(rb'\s*([A-Za-z_][\w.$-]*)\s*:\s*"0x')
_COMMA = re.compile(rb"\s*,")
_TAIL = re.compile(rb"\s*\}\s*\}\s*#-\}\s*$")
_HANDLE = re.compile(r"^dense_resource<([A-Za-z_][\w.$-]*)>")
_USE = b"dense_resource<"


@record(mutable=True)
class Blobs:
    """The text's code and the bytes of each of its resources, by name."""

    code: bytes                                 # the text up to the section
    data: dict[str, tuple[np.ndarray, int]]     # name -> (bytes, their alignment)
    uses: int                                   # ``dense_resource<`` handles in the code


def split_blobs(data: bytes) -> Blobs | None:
    """``data``'s code and resources apart, or None where it has no section
    worth it or one in a form this does not read (then MLIR parses it all)."""
    # the section starts a line (no MLIR string holds a newline): found from
    # the front it is past the code alone; rfind read all the hex back to it
    # (0.06 s for 64 MB of weights). Anything else that starts a line so is no
    # section: the checks below fail and MLIR parses it all, as with rfind.
    start = data.find(b"\n{-#") + 1 or data.rfind(b"{-#")
    if start < 0 or len(data) - start < MIN_SECTION_BYTES:
        return None
    head = _HEAD.match(data, start)
    if head is None:
        return None
    blobs: dict[str, tuple[np.ndarray, int]] = {}
    position = head.end()
    while True:
        key = _KEY.match(data, position)
        if key is None:
            break
        end = data.find(b'"', key.end())
        blob = _decoded(data, key.end(), end)
        if blob is None or key.group(1).decode() in blobs:
            return None
        blobs[key.group(1).decode()] = blob
        position = end + 1
        comma = _COMMA.match(data, position)
        position = comma.end() if comma else position
    if not _TAIL.match(data, position):
        return None
    code = data[:start]
    return Blobs(code, blobs, code.count(_USE))


def _decoded(data: bytes, start: int, end: int) -> tuple[np.ndarray, int] | None:
    """A blob's bytes and alignment: MLIR writes the alignment (4 bytes, little
    endian), then the data, all in hex. None where that is not what is there.
    The bytes are copied to a ``CONSTANT_ALIGNMENT`` boundary; the blob keeps
    the alignment it declared (bytecode holding it demands that of its buffer)."""
    if end < 0 or (end - start) % 2 or end - start < 8:
        return None
    try:
        raw = binascii.a2b_hex(memoryview(data)[start:end])
    except (binascii.Error, ValueError):
        return None
    alignment = int.from_bytes(raw[:4], "little")
    if alignment == 0 or alignment & (alignment - 1) or alignment > CONSTANT_ALIGNMENT:
        return None
    return aligned_copy(memoryview(raw)[4:]), alignment


def bind_blobs(module: ir.Module, blobs: Blobs, source_name: str) -> bool:
    """Give each ``stablehlo.constant dense_resource<name>`` of ``module``
    (parsed from ``blobs.code``) its bytes; False where some handle is not
    such a constant's (the caller then parses the whole text instead)."""
    constants = []

    def visit(op):
        if op.name == "stablehlo.constant":
            value = op.attributes["value"]
            # a dense weight is not printed: its text is all its hex
            found = None if isinstance(value.maybe_downcast(), ir.DenseElementsAttr) \
                else _HANDLE.match(str(value))
            if found:
                constants.append((op, value, found.group(1)))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if len(constants) != blobs.uses:
        return False
    with module.context, ir.Location.unknown():
        for op, value, name in constants:
            op.attributes["value"] = _attribute(blobs, name, value, source_name)
    return True


def _attribute(blobs: Blobs, name: str, value: ir.Attribute, source_name: str) -> ir.Attribute:
    shaped = ir.ShapedType(value.type)
    count = 1
    for dim in shaped.shape:
        count *= dim
    wanted = count * shaped.element_type.width // 8
    data, alignment = blobs.data.get(name, (None, 0))
    if data is None or len(data) != wanted:
        got = "no bytes" if data is None else f"{len(data)} bytes"
        raise CompileError(error(f"resource '{name}' has {got}; its constant of type "
                                 f"{value.type} needs {wanted}", source_name),
                           "the program's dialect_resources section does not match its "
                           "constants: export it again")
    return ir.DenseResourceElementsAttr.get_from_buffer(data, name, value.type, alignment=alignment)
