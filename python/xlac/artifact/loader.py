"""Running an artifact (see ``xlac.artifact.container``) without MLIR: ``xlac.load``
and ``xlac.deserialize``.

The metadata is read and checked before the library is mapped; the library
is then opened from memory (a memfd), so the bytes that were checked are the
bytes that run, even if the file changes meanwhile.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import tempfile
import uuid
from pathlib import Path

from xlac.artifact import container as artifact
from xlac.errors import CompileError
from xlac.executable import Executable
from xlac.targets.cpu.runtime import keep_freed_memory
from xlac.signature import Signature, TensorSpec

_ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


class LibraryFunction:
    """One entry of a loaded library, called like ``CpuFunction``: with the
    data pointers of every input, then every output."""

    def __init__(self, library: ctypes.CDLL, symbol: str, num_inputs: int, blob: bytes):
        self._library = library          # keeps the code mapped
        self._function = _ENTRY_TYPE((symbol, library))
        self._num_inputs = num_inputs
        self.artifact = blob             # what Executable.serialize returns

    def __call__(self, pointers: list[int]) -> None:
        inputs = (ctypes.c_void_p * max(self._num_inputs, 1))(*pointers[:self._num_inputs])
        rest = pointers[self._num_inputs:]
        outputs = (ctypes.c_void_p * max(len(rest), 1))(*rest)
        status = self._function(ctypes.addressof(inputs), ctypes.addressof(outputs))
        if status != 0:
            raise RuntimeError(f"compiled entry returned status {status}")


class NoStages:
    """``as_text`` for an executable that was loaded, not compiled here."""

    def __init__(self, origin: str):
        self._origin = origin

    def names(self) -> list[str]:
        return []

    def text(self, stage: str) -> str:
        raise CompileError(f"<unknown>: error: no IR for stage '{stage}': this executable was "
                           f"loaded from {self._origin}",
                           "compile the source with xlac.compile to see its stages")


def load(path: str | os.PathLike, entry: str = "main", target: str = "cpu") -> Executable:
    """Run an ``xla-compile`` artifact (or a file of ``Executable.serialize()`` bytes)."""
    blob = _read(path)
    return from_blob(blob, str(path), entry, target)


def deserialize(blob: bytes, entry: str = "main", target: str = "cpu") -> Executable:
    """The inverse of ``Executable.serialize()``."""
    return from_blob(bytes(blob), "<serialized executable>", entry, target)


def from_blob(blob: bytes, what: str, entry: str = "main", target: str = "cpu",
              stages=None, expect: dict | None = None) -> Executable:
    """An Executable for ``entry`` of a checked artifact.

    ``expect``: metadata fields that must hold these values (the cache's key).
    """
    library_bytes, meta = artifact.unpack(blob, what)
    keep_freed_memory()          # as for JIT-compiled code: warm temporaries
    for field, value in (expect or {}).items():
        if meta.get(field) != value:
            raise artifact.ArtifactError(f"{what}: foreign entry ({field} is "
                                         f"{meta.get(field)!r}, expected {value!r})")
    artifact.check_compatible(meta, what, target)
    entries = meta.get("entries", {})
    if entry not in entries:
        raise artifact.ArtifactError(f"{what}: no entry '{entry}' (entries: "
                                     f"{', '.join(sorted(entries)) or 'none'})")
    description = entries[entry]
    signature = signature_from_json(description)
    library = open_library(library_bytes)
    function = LibraryFunction(library, description["symbol"], len(signature.inputs), blob)
    return Executable(function, signature, stages or NoStages(what), target, entry=entry)


def open_library(data: bytes) -> ctypes.CDLL:
    """dlopen a shared library held in memory.

    The loader takes a path it has seen before, or a file whose device and
    inode it has seen, for a library it already holds. So the code lives in
    a memfd (whose inodes are never reused) reached through a symlink of a
    name never used before (``/proc/self/fd/N`` numbers are reused).
    """
    if not hasattr(os, "memfd_create"):
        return _open_from_kept_file(data)
    fd = os.memfd_create("xlac-artifact", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        with tempfile.TemporaryDirectory(prefix="xlac-load-") as directory:
            link = Path(directory) / f"{uuid.uuid4().hex}.so"
            link.symlink_to(f"/proc/self/fd/{fd}")
            return ctypes.CDLL(str(link), mode=os.RTLD_LOCAL)
    finally:
        os.close(fd)           # the mapping outlives the descriptor


def _open_from_kept_file(data: bytes) -> ctypes.CDLL:
    """Without memfd: a private file kept until exit, so its inode stays unique."""
    handle = tempfile.NamedTemporaryFile(prefix="xlac-load-", suffix=".so", delete=False)
    with handle:
        handle.write(data)
    atexit.register(os.unlink, handle.name)
    return ctypes.CDLL(handle.name, mode=os.RTLD_LOCAL)


def signature_to_json(signature: Signature) -> dict:
    def specs(items):
        return [{"shape": list(s.shape), "type": s.element_type} for s in items]
    return {"inputs": specs(signature.inputs), "outputs": specs(signature.outputs)}


def signature_from_json(description: dict) -> Signature:
    def specs(items):
        return tuple(TensorSpec(tuple(item["shape"]), item["type"]) for item in items)
    return Signature(specs(description["inputs"]), specs(description["outputs"]))


def _read(path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise artifact.ArtifactError(f"{path}: cannot read artifact: {exc.strerror}") from None
