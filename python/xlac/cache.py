"""The persistent compilation cache: compile once, load in milliseconds.

On by default under ``$XDG_CACHE_HOME/xlac`` (``~/.cache/xlac``);
``XLAC_CACHE_DIR`` moves it and an empty value turns it off. An entry is an
artifact (``xlac.artifact.container``: a shared library and its metadata; for cuda,
``xlac.targets.cuda.serialize``: the PTX and host schedule as JSON) named by a
key over the module's bytecode, the compile options, the target, the CPU
features and the versions of xlac (and a digest of its code), torch-mlir
and llvmlite. Entries are code, so before one is loaded the file must be a
regular file owned by this user and writable by nobody else, its checksum
must match, and its metadata must carry the same key; anything else is
ignored, logged, and rebuilt. Writes are atomic (a temporary file, then a
rename) and happen on a background thread so a miss costs no extra wall time.
Logging: one line per hit or miss on the ``xlac.cache`` logger.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import shutil
import stat
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from xlac.artifact import link as aot
from xlac.artifact import container as artifact
from xlac.targets.cuda import serialize as cuda_cache
from xlac.artifact.loader import from_blob
from xlac.mlir import passmanager

log = logging.getLogger("xlac.cache")

_MAX_BYTES = 2 << 30                  # evict least recently used entries above this
_SUFFIX = ".xlac"
_CUDA_SUFFIX = ".cuda.json"


def cache_dir() -> Path | None:
    """Where entries live, or None when caching is off."""
    value = os.environ.get("XLAC_CACHE_DIR")
    if value is not None:
        return Path(value).expanduser() if value.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "xlac"


def cache_key(module, options: dict) -> str:
    """SHA-256 over the module's bytecode, the options and the environment.

    The bytecode is of a copy without locations: they do not change the
    code, so a comment or a moved line still hits (as JAX's cache does).
    """
    bare = module.operation.clone()
    with module.context:
        passmanager.PassManager.parse("builtin.module(strip-debuginfo)").run(bare)
    buffer = io.BytesIO()
    bare.write_bytecode(buffer)
    bare.erase()
    digest = hashlib.sha256(buffer.getvalue())
    digest.update(json.dumps({"options": options, "environment": artifact.environment()},
                             sort_keys=True).encode())
    return digest.hexdigest()


class CompilationCache:
    """Entries in one private directory."""

    def __init__(self, directory: Path):
        self.directory = directory

    @classmethod
    def open(cls) -> "CompilationCache | None":
        directory = cache_dir()
        if directory is None:
            return None
        problem = _make_private_directory(directory)
        if problem:
            log.warning("xlac cache off: %s", problem)
            return None
        return cls(directory)

    def lookup(self, key: str, what: str, entry: str, target: str, stages):
        """The cached Executable, or None (after logging why)."""
        start = time.perf_counter()
        _wait_for_pending(key)              # compiled a moment ago: its entry is on the way
        path = self.directory / (key + (_CUDA_SUFFIX if target == "cuda" else _SUFFIX))
        try:
            blob = _read_checked(path)
            exe = (cuda_cache.executable_from(blob, key, entry, stages) if target == "cuda" else
                   from_blob(blob, str(path), entry, target, stages, expect={"cache_key": key}))
        except FileNotFoundError:
            log.info("xlac cache miss %s (%s): no entry", key[:16], what)
            return None
        except (OSError, artifact.ArtifactError, ValueError) as exc:
            log.warning("xlac cache miss %s (%s): ignoring a bad entry, rebuilding: %s",
                        key[:16], what, exc)
            return None
        _touch(path)
        log.info("xlac cache hit %s (%s) in %.1f ms", key[:16], what,
                 (time.perf_counter() - start) * 1e3)
        return exe

    def store(self, key: str, exe, what: str) -> None:
        """Write an entry for ``exe``; the link runs in the background."""
        if exe.target == "cuda":                   # PTX and a schedule: small, written now
            try:
                aot.write_atomically(self.directory / (key + _CUDA_SUFFIX),
                                     cuda_cache.entry_bytes(exe, key), mode=0o600)
                _evict(self.directory, _MAX_BYTES)
            except OSError as exc:
                log.warning("xlac cache: could not store %s (%s): %s", key[:16], what, exc)
            return
        workdir = Path(tempfile.mkdtemp(prefix="xlac-cache-"))
        try:
            obj = aot.entry_object(exe, workdir)     # now: the JIT owns the code
        except Exception:  # noqa: BLE001 - a cache that cannot store must not fail a compile
            shutil.rmtree(workdir, ignore_errors=True)
            log.warning("xlac cache: cannot store %s (%s): no object code", key[:16], what)
            return
        _PENDING[key] = _pool().submit(self._write, key, obj, exe.target, what, workdir)

    def _write(self, key, obj, target, what, workdir: Path) -> None:
        try:
            blob, _ = aot.link_library([obj], "xlac", "libxlac_module.so", target, what,
                                       workdir, {"cache_key": key})
            aot.write_atomically(self.directory / (key + _SUFFIX), blob, mode=0o600)
            _evict(self.directory, _MAX_BYTES)
        except Exception as exc:  # noqa: BLE001 - logged; the compile already succeeded
            log.warning("xlac cache: could not store %s (%s): %s", key[:16], what, exc)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            _PENDING.pop(key, None)


_POOL: tuple[int, ThreadPoolExecutor] | None = None
_PENDING: dict = {}                   # key -> the future writing its entry


def _wait_for_pending(key: str) -> None:
    future = _PENDING.get(key)
    if future is not None and _POOL is not None and _POOL[0] == os.getpid():
        future.result()


def _pool() -> ThreadPoolExecutor:
    """One writer thread per process (a forked child gets its own)."""
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():
        _POOL = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="xlac-cache"))
    return _POOL[1]


def flush() -> None:
    """Wait until every pending entry is written (tests, benchmarks)."""
    if _POOL is not None and _POOL[0] == os.getpid():
        _POOL[1].submit(lambda: None).result()


def _make_private_directory(directory: Path) -> str:
    """Create ``directory`` mode 0700; say what is wrong if it is unsafe."""
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = directory.stat()
    except OSError as exc:
        return f"cannot create {directory}: {exc.strerror}"
    if info.st_uid != os.getuid():
        return f"{directory} belongs to another user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{directory} is writable by other users (chmod 700 it)"
    return ""


def _read_checked(path: Path) -> bytes:
    """The entry's bytes, if it is a regular file only this user can write."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ValueError("owned or writable by another user")
        return handle.read()


def _touch(path: Path) -> None:
    try:
        os.utime(path)                 # eviction drops the least recently used
    except OSError:
        pass


def _evict(directory: Path, limit: int) -> None:
    entries = []
    for item in os.scandir(directory):
        if item.name.endswith((_SUFFIX, _CUDA_SUFFIX)) and item.is_file(follow_symlinks=False):
            info = item.stat(follow_symlinks=False)
            entries.append((info.st_mtime, info.st_size, item.path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        Path(path).unlink(missing_ok=True)
        total -= size
