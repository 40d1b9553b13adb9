"""What a shared library would run the moment it is opened, read from its bytes.

``dlopen`` runs code of the library before the caller gets it back: its
initializers (``DT_INIT``, ``DT_INIT_ARRAY``, ``DT_PREINIT_ARRAY``), the IFUNC
resolvers its relocations reach, and the libraries it needs (``DT_NEEDED``,
looked up along its ``RPATH``/``RUNPATH``), with their initializers. xlac links
its artifacts without initializers (``-nostartfiles``, C code with no
constructors), so a library that has one was not linked by xlac, or was
changed since: ``load_time_code`` lists what would run, and the loader
refuses such a library before mapping any of it.

This is a check of what a library *is*, not a signature of who made it:
the trust boundary is who can write the file (docs/security.md).
"""

from __future__ import annotations

import os
import stat
import struct

_MACHINES = {"x86_64": 62, "AMD64": 62, "aarch64": 183, "arm64": 183}
_IRELATIVE = {62: 37, 183: 1032}
_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
_PHDR = struct.Struct("<IIQQQQQQ")
_DYN = struct.Struct("<qQ")
_RELA = struct.Struct("<QQq")
_SYM = struct.Struct("<IBBHQQ")
_PT_LOAD, _PT_DYNAMIC = 1, 2
(_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_SYMTAB, _DT_RELA, _DT_RELASZ, _DT_INIT,
 _DT_RPATH, _DT_REL, _DT_TEXTREL, _DT_JMPREL, _DT_PLTRELSZ, _DT_INIT_ARRAY,
 _DT_INIT_ARRAYSZ, _DT_RUNPATH, _DT_PREINIT_ARRAY, _DT_PREINIT_ARRAYSZ) = (
    0, 1, 5, 6, 7, 8, 12, 15, 17, 22, 23, 2, 25, 27, 29, 32, 33)


class NotALibrary(ValueError):
    """The bytes are not a well-formed ELF shared library for this machine."""


def load_time_code(library: bytes | memoryview) -> list[str]:
    """What opening ``library`` would run of its own, or load from where it
    says (empty: nothing); NotALibrary if it is no library for this machine."""
    machine = _check_header(library)
    segments, dynamic = _program_headers(library)
    tags = _dynamic_entries(library, dynamic)
    found = []
    for tag, name in ((_DT_INIT, "an initializer (DT_INIT)"),
                      (_DT_PREINIT_ARRAY, "pre-initializers (DT_PREINIT_ARRAY)"),
                      (_DT_TEXTREL, "relocations in its code (DT_TEXTREL)"),
                      (_DT_REL, "REL relocations (xlac's libraries use RELA)")):
        if tags.get(tag):
            found.append(name)
    if tags.get(_DT_INIT_ARRAYSZ, [0])[0]:
        found.append(f"{tags[_DT_INIT_ARRAYSZ][0] // 8} constructor(s) (DT_INIT_ARRAY)")
    strings = _address(segments, tags.get(_DT_STRTAB, [0])[0])
    for needed in tags.get(_DT_NEEDED, []):
        name = _string(library, strings, needed)
        if "/" in name:
            found.append(f"a needed library named by path ({name})")
    for tag in (_DT_RPATH, _DT_RUNPATH):
        for entry in tags.get(tag, []):
            found += [f"a library search path others can write ({path})"
                      for path in _string(library, strings, entry).split(":")
                      if not _trusted_directory(path)]
    found += _ifunc_relocations(library, segments, tags, machine)
    return found


def _check_header(library: bytes) -> int:
    if len(library) < _HEADER.size or library[:4] != b"\x7fELF":
        raise NotALibrary("not an ELF file")
    ident, kind, machine, *_ = _HEADER.unpack_from(library)
    if ident[4] != 2 or ident[5] != 1:
        raise NotALibrary("not a 64-bit little-endian ELF file")
    if kind != 3:
        raise NotALibrary("not a shared library (ELF type is not ET_DYN)")
    here = os.uname().machine        # platform.machine(), without importing platform (1 ms)
    if machine != _MACHINES.get(here):
        raise NotALibrary(f"made for ELF machine {machine}, not this {here}")
    return machine


def _program_headers(library: bytes) -> tuple[list[tuple[int, int, int]], tuple[int, int]]:
    """The loadable segments (vaddr, offset, size) and the dynamic segment (offset, size)."""
    header = _HEADER.unpack_from(library)
    offset, size, count = header[5], header[9], header[10]
    if size != _PHDR.size or offset + size * count > len(library):
        raise NotALibrary("its program headers lie outside the file")
    segments, dynamic = [], None
    for index in range(count):
        kind, _, file_offset, vaddr, _, file_size, _, _ = _PHDR.unpack_from(
            library, offset + index * size)
        if file_offset + file_size > len(library):
            raise NotALibrary("a segment lies outside the file")
        if kind == _PT_LOAD:
            segments.append((vaddr, file_offset, file_size))
        elif kind == _PT_DYNAMIC:
            dynamic = (file_offset, file_size)
    if dynamic is None:
        raise NotALibrary("no dynamic segment")
    return segments, dynamic


def _dynamic_entries(library: bytes, dynamic: tuple[int, int]) -> dict[int, list[int]]:
    tags: dict[int, list[int]] = {}
    offset, size = dynamic
    for position in range(offset, offset + size - _DYN.size + 1, _DYN.size):
        tag, value = _DYN.unpack_from(library, position)
        if tag == _DT_NULL:
            break
        tags.setdefault(tag, []).append(value)
    return tags


def _address(segments, vaddr: int) -> int:
    """The file offset of virtual address ``vaddr``."""
    for start, offset, size in segments:
        if start <= vaddr < start + size:
            return offset + vaddr - start
    raise NotALibrary(f"address {vaddr:#x} is in no loadable segment")


def _string(library: bytes | memoryview, table: int, index: int) -> str:
    """The NUL-terminated string at ``table + index``, read in growing windows
    (``library`` may be a view of a cache entry, which has no ``find``)."""
    start, window = table + index, 256
    while True:
        chunk = bytes(library[start:start + window])
        end = chunk.find(b"\0")
        if end >= 0:
            return chunk[:end].decode(errors="replace")
        if start + window >= len(library):
            raise NotALibrary("an unterminated string")
        window *= 4


def _trusted_directory(path: str) -> bool:
    """Absolute, and writable only by root or this user (as the cache directory)."""
    if not os.path.isabs(path):
        return False
    try:
        info = os.stat(path)
    except OSError:
        return True                       # nothing there to load from
    return info.st_uid in (0, os.getuid()) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _ifunc_relocations(library: bytes, segments, tags, machine: int) -> list[str]:
    """IFUNC resolvers the library's relocations would run while it is opened."""
    symbols = _address(segments, tags[_DT_SYMTAB][0]) if _DT_SYMTAB in tags else None
    found = []
    for table, size in ((_DT_RELA, _DT_RELASZ), (_DT_JMPREL, _DT_PLTRELSZ)):
        if table not in tags:
            continue
        start = _address(segments, tags[table][0])
        end = start + tags.get(size, [0])[0]
        if end > len(library):
            raise NotALibrary("relocations lie outside the file")
        for position in range(start, end - _RELA.size + 1, _RELA.size):
            _, info, _ = _RELA.unpack_from(library, position)
            kind, symbol = info & 0xFFFFFFFF, info >> 32
            if kind == _IRELATIVE.get(machine) or (
                    symbol and symbols is not None and _is_own_ifunc(library, symbols, symbol)):
                found.append("an IFUNC resolver run by a relocation")
                return found
    return found


def _is_own_ifunc(library: bytes, symbols: int, index: int) -> bool:
    position = symbols + index * _SYM.size
    if position + _SYM.size > len(library):
        raise NotALibrary("a relocation names a symbol outside the file")
    _, info, _, section, _, _ = _SYM.unpack_from(library, position)
    return section != 0 and info & 0xF == 10            # STT_GNU_IFUNC, defined here
