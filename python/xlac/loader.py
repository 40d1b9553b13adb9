"""``xlac.load`` and ``xlac.deserialize``: compiled code back, without MLIR.

The bytes are checked before any of their code is mapped (a regular file of
bounded size; the artifact's trailer, checksum, metadata schema and build
identity: ``xlac.artifact.container``; for CPU code, that opening the
library runs none of its code: ``xlac.artifact.elf``), then handed to their
target (``xlac.targets``). docs/security.md says what this does and does not
protect against.
"""

from __future__ import annotations

import os

from xlac.artifact.container import ArtifactError, read_blob, unpack
from xlac.errors import CompileError, error
from xlac.executable import Executable
from xlac.options import Options
from xlac.spmd.mpi import abort_job_on_uncaught_errors
from xlac.spmd.start import start_on_every_rank
from xlac.targets import get_target


class LoadedStages:
    """The stages of an executable that was loaded, not compiled here: only
    those whose text its code keeps (CUDA's kernels and PTX), and the fusion
    report its artifact keeps (``xla-compile`` and ``Executable.serialize``
    write it into the metadata)."""

    def __init__(self, origin: str, blob: bytes = b"", entry: str = "main"):
        self._origin = origin
        self._blob = blob
        self._entry = entry
        self._texts: dict[str, str] = {}
        self.remarks: list = []

    def saved_report(self) -> str | None:
        """The fusion report kept in the artifact's metadata, if it has one."""
        try:
            _, metadata = unpack(self._blob, self._origin)
        except ArtifactError:
            return None
        return (metadata.get("fusion_reports") or {}).get(self._entry)

    def keep(self, texts: dict[str, str]) -> None:
        self._texts.update(texts)

    def names(self) -> list[str]:
        return list(self._texts)

    def text(self, stage: str) -> str:
        if stage in self._texts:
            return self._texts[stage]
        raise CompileError(error(f"no IR for stage '{stage}': this executable was loaded "
                                 f"from {self._origin}"),
                           "compile the source with xlac.compile to see its stages")

    def module(self, stage: str):
        return None


def load(path: str | os.PathLike, entry: str = "main", target: str = "cpu",
         options: Options | None = None) -> Executable:
    """Run an ``xla-compile`` artifact (or a file of ``Executable.serialize()`` bytes)."""
    return _from_bytes(read_blob(path), str(path), entry, target, options)


def deserialize(blob: bytes, entry: str = "main", target: str = "cpu",
                options: Options | None = None) -> Executable:
    """The inverse of ``Executable.serialize()``."""
    return _from_bytes(bytes(blob), "<serialized executable>", entry, target, options)


def _from_bytes(blob: bytes, what: str, entry: str, target: str, options) -> Executable:
    options = options or Options.from_env()
    abort_job_on_uncaught_errors(options)
    try:
        exe = get_target(target).load(blob, what, entry, LoadedStages(what, blob, entry), options)
    except ArtifactError:
        raise
    except ValueError as exc:                    # what the checks above let through
        raise ArtifactError(f"{what}: {exc}") from None
    grid = getattr(exe.function, "grid", None)
    if grid is not None:                         # SPMD: every rank loaded it; make its communicators
        return start_on_every_rank(grid, lambda: exe, what, options)
    return exe
