"""The on-disk form of compiled code, for every target: the code with
metadata after it, and the one reader that checks it all before use.

Layout (what ``xla-compile`` writes, ``Executable.serialize`` returns and
the compilation cache stores)::

    <code>  <metadata JSON>  <u64 JSON length>  <SHA-256>  b"XLACART1"

The code is the target's: an ELF shared library for the CPU, the PTX and host
schedule for CUDA, the program's text for the reference interpreter. Why a
trailer: the dynamic loader ignores bytes after the ELF image, so a CPU
artifact is an ordinary ``.so`` for C programs, while xlac can read, checksum
and check the metadata *before* mapping any of the code. The SHA-256 covers
the code and the JSON, so a truncated or corrupted file is refused.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from xlac.artifact.elf import NotALibrary, load_time_code
from xlac.artifact.schema import check_metadata
from xlac.cache.identity import FORMAT, build_identity, source_digest  # noqa: F401 - re-exported
from xlac.checksum import sha256
from xlac.cpu_model import cpu_model
from xlac.errors import XlacError
from xlac.files import read_regular
from xlac.record import record
from xlac.signature import Signature

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from xlac.spmd.grid import DeviceGrid

MAGIC = b"XLACART1"
_TAIL = struct.Struct("<Q32s8s")          # JSON length, SHA-256, magic
MAX_ARTIFACT_BYTES = 16 << 30            # a sparse or endless file is refused, not read
MAX_METADATA_BYTES = 64 << 20           # signatures and fusion reports: far below this


class ArtifactError(XlacError, ValueError):
    """A compiled artifact is unreadable, corrupted, or made for another xlac or CPU."""


def pack(library: bytes | memoryview, metadata: dict) -> bytes:
    """The library with its metadata trailer."""
    text = json.dumps(metadata, sort_keys=True).encode()
    body = b"".join([library, text])          # the library may be a view (unpack's)
    return body + _TAIL.pack(len(text), _digest(body), MAGIC)


def _digest(data: bytes) -> bytes:
    hasher = sha256(len(data))
    hasher.update(data)
    return hasher.digest()


def unpack(blob: bytes | memoryview, what: str = "artifact",
           verified: bool = False) -> tuple[bytes, dict]:
    """``(library, metadata)``; ArtifactError if the blob is not intact."""
    library, metadata = unpack_view(blob, what, verified)
    return bytes(library), metadata


def unpack_view(blob: bytes | memoryview, what: str = "artifact",
                verified: bool = False) -> tuple[memoryview, dict]:
    """``unpack`` with the library a view into ``blob``: a cache hit's megabytes
    are not copied before the loader's own write (a 5.6 MB hit: 25 -> 17 ms).

    ``verified``: the caller has already checked a checksum over every byte of
    ``blob`` (a cache entry's), so the trailer's SHA-256 is not computed again.
    """
    if len(blob) < _TAIL.size or blob[-len(MAGIC):] != MAGIC:
        raise ArtifactError(f"{what}: not an xlac artifact (no xlac metadata at its end; "
                            "was it truncated or stripped?)")
    length, digest, _ = _TAIL.unpack(blob[-_TAIL.size:])
    body = memoryview(blob)[:-_TAIL.size]
    if length > min(len(body), MAX_METADATA_BYTES):
        raise ArtifactError(f"{what}: truncated (metadata of {length} bytes in a "
                            f"{len(blob)}-byte file)")
    if not verified and _digest(body) != digest:
        raise ArtifactError(f"{what}: checksum mismatch: the file is corrupted")
    library, text = body[:len(body) - length], bytes(body[len(body) - length:])
    try:
        metadata = json.loads(text)
    except (ValueError, RecursionError):
        raise ArtifactError(f"{what}: unreadable metadata") from None
    try:
        check_metadata(metadata)
    except ValueError as exc:
        raise ArtifactError(f"{what}: malformed metadata: {exc}") from None
    return library, metadata


def read_blob(path: str | Path) -> bytes:
    """The bytes of the artifact at ``path``: a regular file (a FIFO or device is
    not opened for reading, so cannot hang), at most ``MAX_ARTIFACT_BYTES``."""
    try:
        return read_regular(Path(path), MAX_ARTIFACT_BYTES)
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read artifact: {exc.strerror or exc}") from None
    except MemoryError:
        raise ArtifactError(f"{path}: too big to read into memory") from None
    except ValueError as exc:
        raise ArtifactError(f"{path}: not an artifact: {exc}") from None


def read(path: str | Path) -> tuple[bytes, dict]:
    return unpack(read_blob(path), str(path))


def check_library(library: bytes, what: str) -> None:
    """Refuse a library that would run code of its own as it is opened
    (xlac's have no initializers: ``xlac.artifact.elf``), before it is."""
    try:
        found = load_time_code(library)
    except NotALibrary as exc:
        raise ArtifactError(f"{what}: not a library xlac made: {exc}") from None
    if found:
        raise ArtifactError(f"{what}: refusing a library xlac did not link: opening it would "
                            f"run {'; '.join(found)}. Recompile it with xla-compile")


def entry_description(metadata: dict, entry: str, what: str) -> dict:
    """The metadata of ``entry`` (its symbol and signature); ArtifactError if absent."""
    entries = metadata.get("entries", {})
    if not isinstance(entries, dict) or entry not in entries:
        names = ", ".join(sorted(entries)) if isinstance(entries, dict) else ""
        raise ArtifactError(f"{what}: no entry '{entry}' (entries: {names or 'none'})")
    return entries[entry]


def check_compatible(metadata: dict, what: str, target: str = "cpu") -> None:
    """Refuse an artifact made by another xlac, for another target or CPU."""
    here = build_identity()
    problems = []
    for field in ("format", "xlac", "xlac_build", "torch-mlir", "machine"):
        if metadata.get(field) != here[field]:
            problems.append(f"{_FIELD_NAMES[field]} {metadata.get(field)!r} "
                            f"(this is {here[field]!r})")
    if metadata.get("target") != target:
        problems.append(f"built for target {metadata.get('target')!r} (loading for {target!r})")
    missing = cpu_model("host").lacks(metadata.get("cpu_features", []))
    if missing:
        problems.append("uses CPU features this CPU lacks: " + ", ".join(missing))
    if problems:
        raise ArtifactError(f"{what}: refusing to load an artifact made elsewhere: "
                            + "; ".join(problems) + ". Recompile it here with xla-compile (or serialize() "
                            "it again from this xlac)")


_FIELD_NAMES = {"format": "artifact format", "xlac": "built by xlac version",
                "xlac_build": "built by xlac sources with digest",
                "torch-mlir": "built against torch-mlir", "machine": "built for machine"}


@record
class Artifact:
    """An artifact read and checked for one entry: what a target's loader takes."""

    code: memoryview                     # the target's code (a view into the bytes read)
    metadata: dict
    blob: bytes | memoryview             # every byte, as read (``Executable.serialize``)
    what: str                            # where it came from, for messages
    entry: str
    symbol: str                          # the entry's symbol in the code
    signature: Signature
    grid: DeviceGrid | None              # an SPMD entry's device grid (None: one device)


def read_artifact(blob: bytes | memoryview, what: str, target: str, entry: str,
                  verified: bool = False) -> Artifact:
    """The artifact in ``blob`` for ``entry`` of ``target``, once its trailer,
    checksum (unless ``verified``: the caller checked every byte), metadata,
    build, target, CPU features and entry are known good; ArtifactError otherwise."""
    code, metadata = unpack_view(blob, what, verified)
    check_compatible(metadata, what, target)
    description = entry_description(metadata, entry, what)
    return Artifact(code, metadata, blob, what, entry, description["symbol"],
                    Signature.from_json(description), _grid(description))


def _grid(description: dict) -> DeviceGrid | None:
    """An SPMD entry's device grid; None (and nothing imported) for a plain one."""
    if "spmd" not in description:
        return None
    from xlac.spmd.grid import DeviceGrid
    return DeviceGrid(*description["spmd"])


def metadata_for(target: str, entries: dict, cpu_features=(), extra: dict | None = None) -> dict:
    """An artifact's metadata: this build's identity, the target, and for each
    entry name its ``(symbol, signature, grid)``."""
    return build_identity() | {
        "target": target, "cpu_features": sorted(cpu_features),
        "entries": {entry: {"symbol": symbol, **signature.to_json(),
                            **({} if grid is None else {"spmd": [grid.replicas, grid.partitions]})}
                    for entry, (symbol, signature, grid) in entries.items()},
    } | (extra or {})

