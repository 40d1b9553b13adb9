"""A CPU artifact's large constants carried beside its code, not linked into it.

The code reads constant ``i`` through entry ``i`` of a table of pointers
(``xla-constant-table``). A library that runs in this process (a program
compiled in pieces, a cache entry, a serialized executable) exports that
table, zeroed, as ``<entry symbol>_constant_table``; the loader fills it with
the addresses of bytes the executable owns. So linking such a library costs
nothing per weight byte. In the artifact the bytes follow the library::

    <library> <constants, each 64-byte aligned from the start>  <metadata JSON> <trailer>

and the metadata's ``constant_data`` says where (``code_bytes``: the library's
length; per entry, each constant's ``[offset, size]`` from the start). An
``xla-compile`` library links them instead (C programs load it alone).

No MLIR here: a cache hit reads its constants through this.
"""

from __future__ import annotations

import ctypes
import mmap

from xlac.artifact import container
from xlac.signature import CONSTANT_ALIGNMENT

KEY = "constant_data"
TABLE_SUFFIX = "_constant_table"


def table_symbol(entry_symbol: str) -> str:
    """The table a library whose constants are carried beside it exports."""
    return entry_symbol + TABLE_SUFFIX


def pack(library: bytes | memoryview, metadata: dict, constants: dict[str, tuple]) -> bytes:
    """The artifact of ``library``, its ``constants`` (entry -> ``Constant``s,
    ``xlac.targets.cpu.constants``) after it."""
    if not any(constants.values()):
        return container.pack(library, metadata)
    parts, offset, placed = [library], len(library), {}
    for entry, listed in constants.items():
        spans = placed.setdefault(entry, [])
        for constant in listed:
            padding = -offset % CONSTANT_ALIGNMENT
            parts.append(bytes(padding))
            offset += padding
            parts.append(constant.data)
            spans.append([offset, constant.data.size])
            offset += constant.data.size
    where = {KEY: {"code_bytes": len(library), "entries": placed}}
    return container.pack(b"".join(parts), metadata | where)


class PackedLater:
    """The artifact of a library run in this process, packed when first asked
    for (``bytes(...)``, by the cache's writer thread or ``serialize()``): its
    constants copied in beside the code and the checksum over them are no part
    of the compile."""

    def __init__(self, library: bytes, metadata: dict, constants: dict[str, tuple]):
        self._parts = (library, metadata, constants)
        self._packed: bytes | None = None

    def __bytes__(self) -> bytes:
        if self._packed is None:          # two threads may both pack: the same bytes
            self._packed = pack(*self._parts)
        return self._packed


def code_of(body: memoryview, metadata: dict) -> memoryview:
    """The library of an artifact's body (what precedes its metadata)."""
    data = metadata.get(KEY)
    return body[:data["code_bytes"]] if isinstance(data, dict) else body


def addresses_in(body: memoryview, metadata: dict, entry: str, what: str):
    """``(addresses, owner)``: where each of ``entry``'s constants lies in
    ``owner``, a private copy of ``body``'s constants in fresh pages (every
    constant as aligned as the compiler's own arrays; neither the artifact's
    bytes nor their alignment in memory are the loader's to keep); ``((), None)``
    for an entry without any. No numpy: a cache hit imports none."""
    data = metadata.get(KEY)
    spans = data.get("entries", {}).get(entry, []) if isinstance(data, dict) else []
    if not spans:
        return (), None
    for span in spans:
        if not (isinstance(span, list) and len(span) == 2
                and all(isinstance(n, int) and n >= 0 for n in span)
                and span[0] % CONSTANT_ALIGNMENT == 0 and sum(span) <= len(body)):
            raise container.ArtifactError(f"{what}: its metadata places a constant outside "
                                          f"it ({span!r})")
    start = min(offset for offset, _ in spans)
    end = max(offset + size for offset, size in spans)
    owner = mmap.mmap(-1, max(end - start, 1))
    owner[:end - start] = body[start:end]
    base = ctypes.addressof(ctypes.c_char.from_buffer(owner)) - start
    return tuple(base + offset for offset, _ in spans), owner


def fill_table(library: ctypes.CDLL, entry_symbol: str, addresses, what: str) -> None:
    """Write ``addresses`` into the library's table, before its code first runs."""
    try:
        table = (ctypes.c_void_p * len(addresses)).in_dll(library, table_symbol(entry_symbol))
    except ValueError:
        raise container.ArtifactError(f"{what}: its metadata lists constants, its library "
                                      "has no table for them: recompile it") from None
    table[:] = addresses


def table_of(constants: tuple) -> ctypes.Array | None:
    """The table of ``constants``' addresses the JIT's code reads (None: none)."""
    if not constants:
        return None
    return (ctypes.c_void_p * len(constants))(*(c.address for c in constants))
