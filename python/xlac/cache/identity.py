"""Which xlac (and which bindings) made a piece of compiled code, found fast.

The identity keys the compilation cache and is checked when an artifact is
loaded, so a cache hit needs it: computed in full it reads every source file
of xlac and reads two versions from the packages' ``.dist-info`` (tens of ms). It is
memoized in a small file of the cache directory, under a fingerprint of the
size and modification time of those same files and of the installed
bindings: a changed source file or a reinstalled package changes the
fingerprint, and the identity is computed again.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

from xlac.checksum import sha256

FORMAT = 1
_SOURCE_PACKAGES = ("xlac", "xlac.passes", "xlac.dialects")
_SOURCE_SUFFIXES = (".py", ".mlir", ".pdll")
_MEMO_NAME = "build-identity.json"

_IDENTITY: dict | None = None           # this process's, once known


def build_identity(memo_dir: Path | None = None) -> dict:
    """The identity; memoized in ``memo_dir`` (the cache directory) when given."""
    global _IDENTITY
    if _IDENTITY is None:
        _IDENTITY = _memoized(Path(memo_dir)) if memo_dir else _computed()
    return _IDENTITY


def source_digest() -> str:
    """A digest of xlac's own code: cache entries die when the compiler changes.

    The version number alone would keep serving code from an older compiler
    to anyone working on xlac itself.
    """
    import hashlib  # here: every source file is read (OpenSSL's is faster); no hit does it
    digest = hashlib.sha256()
    for root, path in _source_files():
        with open(path, "rb") as source:              # path[len(root) + 1:]: its path under root
            digest.update(path[len(root) + 1:].encode() + b"\0" + source.read())
    return digest.hexdigest()[:16]


def _computed() -> dict:
    from xlac.version import __version__, bindings_version
    return {"format": FORMAT, "xlac": __version__, "xlac_build": source_digest(),
            "torch-mlir": bindings_version().split()[-1], "llvmlite": _llvmlite_version(),
            "machine": os.uname().machine}


def _memoized(directory: Path) -> dict:
    memo = directory / _MEMO_NAME
    fingerprint = _fingerprint()
    try:
        saved = json.loads(memo.read_text())
        if saved.get("fingerprint") == fingerprint and _owned_privately(memo):
            return saved["identity"]
    except (OSError, ValueError, KeyError, AttributeError):
        pass                                         # none yet, or unreadable: compute it
    identity = _computed()
    try:
        from xlac.files import write_atomically
        text = json.dumps({"fingerprint": fingerprint, "identity": identity}, sort_keys=True)
        write_atomically(memo, text.encode(), mode=0o600)
    except OSError:
        pass                                         # a read-only cache: compute it each time
    return identity


def _owned_privately(path: Path) -> bool:
    info = path.stat()
    return info.st_uid == os.getuid() and not info.st_mode & 0o022


def _fingerprint() -> str:
    """Sizes and times of xlac's sources and of the packages whose versions count."""
    digest = sha256(0)                  # a few kB: the built-in hasher (xlac.checksum)
    digest.update(os.uname().machine.encode())
    for root, path in _source_files():
        info = os.stat(path)
        digest.update(f"{path[len(root):]}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    for package in ("torch_mlir", "llvmlite"):
        spec = importlib.util.find_spec(package)
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        stamp = origin.stat().st_mtime_ns if origin is not None else 0
        digest.update(f"{package}\0{origin}\0{stamp}\n".encode())
    return digest.hexdigest()


def _source_files() -> list[tuple[str, str]]:
    """(package root, file) of every source file; plain strings: this runs on every hit."""
    files = []
    for package in _SOURCE_PACKAGES:
        root = os.path.dirname(importlib.util.find_spec(package).origin)
        files += [(root, path) for path in sorted(_walk(root))]
    return files


def _walk(directory: str):
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    yield from _walk(entry.path)
            elif entry.name.endswith(_SOURCE_SUFFIXES):
                yield entry.path


def _llvmlite_version() -> str:
    # Only the cuda target uses llvmlite; its version still keys the cache.
    from xlac.version import installed_version
    return installed_version("llvmlite") or "not installed"
