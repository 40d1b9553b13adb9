"""Running CPU code from an artifact, without MLIR: the library is opened
from memory (a memfd), so the bytes that were checked are the bytes that run,
even if the file changes meanwhile.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from xlac.artifact import container
from xlac.errors import XlacError
from xlac.signature import Signature
from xlac.targets.cpu import amx_kernels
from xlac.targets.cpu.constant_data import addresses_in, code_of, fill_table
from xlac.targets.cpu.idle_workers import follow_if_loaded, follow_load
from xlac.targets.cpu.libraries import idle_workers_sleep, keep_freed_memory

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from xlac.spmd.grid import DeviceGrid


class EntryFailed(XlacError):
    """Compiled code reported a failure (its status was not 0)."""


_ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


class LibraryFunction:
    """One entry of a loaded library, called like ``CpuFunction``: with the
    data pointers of every input, then every output."""

    stage_texts: dict = {}           # nothing but the code travels with it
    constant_bytes = None            # the buffer holding the constants the code reads, if any

    def __init__(self, library: ctypes.CDLL, symbol: str, num_inputs: int, blob: bytes,
                 grid: DeviceGrid | None = None, what: str = "the library"):
        self._library = library          # keeps the code mapped
        try:
            self._entry = _ENTRY_TYPE((symbol, library))
        except AttributeError:
            raise container.ArtifactError(f"{what}: its metadata names entry symbol '{symbol}', "
                                          "which its library lacks: recompile it with "
                                          "xla-compile") from None
        self._symbol = symbol
        self._num_inputs = num_inputs
        self._blob = blob                # what Executable.serialize returns
        self.grid = grid                 # an SPMD program's device grid (None: one device)

    def __call__(self, pointers: list[int]) -> None:
        follow_load()
        inputs = (ctypes.c_void_p * max(self._num_inputs, 1))(*pointers[:self._num_inputs])
        rest = pointers[self._num_inputs:]
        outputs = (ctypes.c_void_p * max(len(rest), 1))(*rest)
        status = self._entry(ctypes.addressof(inputs), ctypes.addressof(outputs))
        if status != 0:
            raise EntryFailed(f"the compiled entry returned status {status}")

    def array_caller(self, count: int):
        """``call(inputs, outputs)`` with the ``count`` arrays themselves (plain
        ndarrays, contiguous): the two pointer arrays kept from call to call."""
        from xlac.calls import SparePointerArrays, data_pointers
        entry, inputs_count = self._entry, self._num_inputs
        input_type = ctypes.c_void_p * max(inputs_count, 1)
        output_type = ctypes.c_void_p * max(count - inputs_count, 1)
        spare = SparePointerArrays(lambda: (input_type(), output_type()))

        def call(inputs, outputs) -> None:
            follow_load()
            pointers = spare.take()
            pointers[0][:inputs_count] = data_pointers(inputs)
            pointers[1][:len(outputs)] = data_pointers(outputs)
            status = entry(*pointers)
            spare.give_back(pointers)
            if status != 0:
                raise EntryFailed(f"the compiled entry returned status {status}")
        return call

    def serializer(self, entry: str, signature: Signature):
        return LoadedArtifact(self._blob)

    def start_collectives(self) -> None:
        """Make the entry's communicators: collective, once per rank (``xlac.spmd.start``)."""
        if self.grid is not None:
            ctypes.CFUNCTYPE(ctypes.c_int)((f"{self._symbol}_init", self._library))()


class LoadedArtifact:
    """The bytes a library was loaded from, as ``Executable.serialize`` returns them;
    metadata added (the fusion report) is packed in."""

    def __init__(self, blob: bytes):
        self._blob = blob
        self._extra: dict = {}

    def keep_metadata(self, extra: dict) -> None:
        self._extra.update(extra)

    def __call__(self) -> bytes:
        blob = self._blob
        if not isinstance(blob, (bytes, memoryview)):
            blob = bytes(blob)              # packed when first asked for (constant_data.PackedLater)
        if not self._extra:
            return bytes(blob)              # a cache hit's is a view of the entry read
        # what precedes the metadata stays as it is: a library, the constants after it
        library, metadata = container.unpack(blob)
        return container.pack(library, metadata | self._extra)


def load_function(artifact, options) -> LibraryFunction:
    """The entry of a checked CPU artifact (``xlac.artifact.container.read_artifact``),
    its library opened from memory once nothing of it would run on opening."""
    keep_freed_memory(options.malloc_tuning)  # as for JIT-compiled code: warm temporaries
    if artifact.grid is not None:              # its libxlac_mpi.so: this process's, by soname
        from xlac.spmd.mpi import shim_for
        shim_for(options)
    code = code_of(artifact.code, artifact.metadata)      # the constants carried after it
    addresses, owner = addresses_in(artifact.code, artifact.metadata, artifact.entry,
                                    artifact.what)
    container.check_library(code, artifact.what)    # nothing of it runs before this
    library = open_library(code)
    if addresses:
        fill_table(library, artifact.symbol, addresses, artifact.what)
    follow_if_loaded(idle_workers_sleep())     # its libiomp5 (if it links one) follows the load
    function = LibraryFunction(library, artifact.symbol, len(artifact.signature.inputs),
                               artifact.blob, artifact.grid, artifact.what)
    function.constant_bytes = owner            # the code reads them: they live as long as it
    return function


def open_library(data: bytes) -> ctypes.CDLL:
    """dlopen a shared library held in memory.

    The loader takes a path it has seen before, or a file whose device and
    inode it has seen, for a library it already holds. So the code lives in
    a memfd (whose inodes are never reused) reached through a symlink of a
    name never used before (``/proc/self/fd/N`` numbers are reused).
    The process asks Linux once for leave to use AMX tiles before it opens
    any library (xlac.targets.cpu.amx_kernels; cached, a no-op without AMX):
    one with the AMX micro-kernel linked in needs it, and asking once costs
    less than looking for the kernel's symbol in every library's bytes.
    """
    amx_kernels.request_tile_state()
    idle_workers_sleep()
    if not hasattr(os, "memfd_create"):
        return _open_from_kept_file(data)
    fd = os.memfd_create("xlac-artifact", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        directory = _private_directory()
        link = directory / f"{os.urandom(16).hex()}.so"
        try:
            link.symlink_to(f"/proc/self/fd/{fd}")
            return ctypes.CDLL(str(link), mode=os.RTLD_LOCAL)
        finally:
            link.unlink(missing_ok=True)
            directory.rmdir()
    finally:
        os.close(fd)           # the mapping outlives the descriptor


def _private_directory() -> Path:
    """A new directory only this user can enter (``tempfile``'s, without importing
    it: its import is a good part of a cache hit)."""
    root = os.environ.get("TMPDIR") or "/tmp"
    directory = Path(root) / f"xlac-load-{os.urandom(8).hex()}"
    directory.mkdir(mode=0o700)
    return directory


def _open_from_kept_file(data: bytes) -> ctypes.CDLL:
    """Without memfd: a private file kept until exit, so its inode stays unique."""
    import atexit
    import tempfile
    handle = tempfile.NamedTemporaryFile(prefix="xlac-load-", suffix=".so", delete=False)
    with handle:
        handle.write(data)
    atexit.register(os.unlink, handle.name)
    return ctypes.CDLL(handle.name, mode=os.RTLD_LOCAL)
