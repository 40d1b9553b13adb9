"""The on-disk form of compiled code: a shared library with metadata after it.

Layout (what ``xla-compile`` writes, ``Executable.serialize`` returns and
the compilation cache stores)::

    <ELF shared library>  <metadata JSON>  <u64 JSON length>  <SHA-256>  b"XLACART1"

Why a trailer: the dynamic loader ignores bytes after the ELF image, so the
file is an ordinary ``.so`` for C programs, while xlac can read, checksum
and check the metadata *before* mapping any of the code. The SHA-256 covers
the library and the JSON, so a truncated or corrupted file is refused.
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

from xlac.artifact.identity import FORMAT, build_identity, source_digest  # noqa: F401 - re-exported
from xlac.cpu_model import cpu_model
from xlac.errors import XlacError

MAGIC = b"XLACART1"
_TAIL = struct.Struct("<Q32s8s")          # JSON length, SHA-256, magic



class ArtifactError(XlacError):
    """A compiled artifact is unreadable, corrupted, or made for another xlac or CPU."""


def pack(library: bytes, metadata: dict) -> bytes:
    """The library with its metadata trailer."""
    text = json.dumps(metadata, sort_keys=True).encode()
    digest = hashlib.sha256(library + text).digest()
    return library + text + _TAIL.pack(len(text), digest, MAGIC)


def unpack(blob: bytes, what: str = "artifact") -> tuple[bytes, dict]:
    """``(library, metadata)``; ArtifactError if the blob is not intact."""
    if len(blob) < _TAIL.size or blob[-len(MAGIC):] != MAGIC:
        raise ArtifactError(f"{what}: not an xlac artifact (no xlac metadata at its end; "
                            "was it truncated or stripped?)")
    length, digest, _ = _TAIL.unpack(blob[-_TAIL.size:])
    body = blob[:-_TAIL.size]
    if length > len(body):
        raise ArtifactError(f"{what}: truncated (metadata of {length} bytes in a "
                            f"{len(blob)}-byte file)")
    if hashlib.sha256(body).digest() != digest:
        raise ArtifactError(f"{what}: checksum mismatch: the file is corrupted")
    library, text = body[:len(body) - length], body[len(body) - length:]
    try:
        return library, json.loads(text)
    except ValueError:
        raise ArtifactError(f"{what}: unreadable metadata") from None


def read(path: str | Path) -> tuple[bytes, dict]:
    try:
        blob = Path(path).read_bytes()
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read artifact: {exc.strerror}") from None
    return unpack(blob, str(path))


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
    for field in ("format", "xlac", "machine"):
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
                            + "; ".join(problems) + ". Recompile it here with xla-compile")


_FIELD_NAMES = {"format": "artifact format", "xlac": "built by xlac version",
                "machine": "built for machine"}
