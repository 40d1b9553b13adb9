"""The persistent compilation cache: a checked store of bytes under keys.

It knows no target and no MLIR: ``xlac.compiler`` makes the keys and turns
an executable into bytes and back. On by default under
``$XDG_CACHE_HOME/xlac`` (``~/.cache/xlac``); ``XLAC_CACHE_DIR`` moves it and
an empty value turns it off.

An entry is ``<key>.xlac``: a header line (the keys it was written for, the
SHA-256 and length of the payload) and the payload. Entries are code, so
before one is returned the file must be a regular file owned by this user
and writable by nobody else (anything else, a FIFO, a device, a directory
or a symlink, is never read), at most ``MAX_ENTRY_BYTES`` and not sparse,
its checksum must match and its header must name the key asked for;
anything else is ignored, logged, and rebuilt. The CPU target then checks
the artifact itself (metadata, build identity, no load-time code) before
mapping it. Work directories a killed process left behind are swept once
per process (docs/security.md). Writes are atomic (a temporary file, then a
rename) and happen on a background thread so a miss costs no extra wall time;
a look-up of a key whose write has not started writes it itself rather than
wait behind the queue. One payload stored under several keys is one file with
several names. Eviction keeps a running total of the directory's bytes and
scans it only when that passes the limit (or every ``_RESCAN_WRITES`` writes,
for other processes' entries): a scan of a large cache costs tenths of a second.
Logging: one line per hit or miss on the ``xlac.cache`` logger.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from xlac.checksum import sha256
from xlac.files import (
    private_directory,
    read_private,
    sweep_stale_work_directories,
    write_atomically,
)

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from collections.abc import Callable


class _Log:
    """The ``xlac.cache`` logger, imported on first use. An info line (a hit)
    reaches no handler unless the program imported ``logging`` (to configure
    it), so then it is dropped here and a hit imports no ``logging``."""

    def info(self, *args) -> None:
        if "logging" in sys.modules:
            self._logger().info(*args)

    def warning(self, *args) -> None:
        self._logger().warning(*args)

    @staticmethod
    def _logger():
        import logging
        return logging.getLogger("xlac.cache")


log = _Log()

MAX_BYTES = 2 << 30                   # evict least recently used entries above this
MAX_ENTRY_BYTES = 1 << 30             # a bigger (or sparse) file is refused unread
_SUFFIX = ".xlac"
_MAGIC = b"XLACCACHE2 "


def digest(*parts) -> str:
    """A key: SHA-256 over ``parts`` (bytes as they are, anything else as sorted JSON)."""
    encoded = [part if isinstance(part, bytes) else json.dumps(part, sort_keys=True).encode()
               for part in parts]
    hasher = sha256(sum(map(len, encoded)))
    for data in encoded:
        hasher.update(len(data).to_bytes(8, "little"))
        hasher.update(data)                 # not concatenated: a 90 MB input is not copied
    return hasher.hexdigest()


class CompilationCache:
    """Entries in one private directory."""

    def __init__(self, directory: Path, max_bytes: int = MAX_BYTES):
        self.directory = directory
        self.max_bytes = max_bytes

    @classmethod
    def open(cls, directory: Path | None) -> CompilationCache | None:
        """The cache in ``directory`` (None: off); None, after a warning, if it is unsafe."""
        if directory is None:
            return None
        problem = private_directory(Path(directory))
        if problem:
            log.warning("xlac cache off: %s", problem)
            return None
        return cls(Path(directory))

    def get(self, key: str, what: str, quiet: bool = False) -> bytes | None:
        """The payload stored under ``key``, or None (after logging why, unless
        ``quiet``: a first look-up whose miss a second one reports)."""
        view = self.get_view(key, what, quiet)
        return None if view is None else bytes(view)

    def get_view(self, key: str, what: str, quiet: bool = False) -> memoryview | None:
        """``get`` without copying the payload out of the entry read (a hit of a
        5.6 MB entry copied it four times on its way to the loader)."""
        start = time.perf_counter()
        _wait_for_pending(key)              # written a moment ago: its entry is on the way
        path = self._path(key)
        try:
            payload = _unpack(read_private(path, MAX_ENTRY_BYTES), key)
        except FileNotFoundError:
            if not quiet:
                log.info("xlac cache miss %s (%s): no entry", key[:16], what)
            return None
        except (OSError, ValueError, MemoryError) as exc:
            if not quiet:
                log.warning("xlac cache miss %s (%s): ignoring a bad entry, rebuilding: %s",
                            key[:16], what, exc)
            return None
        _touch(path)
        log.info("xlac cache hit %s (%s) in %.1f ms", key[:16], what,
                 (time.perf_counter() - start) * 1e3)
        return payload

    def put(self, keys: list[str], produce: Callable[[], bytes], what: str) -> None:
        """Store ``produce()`` under every key in ``keys``, on the background thread."""
        _sweep_once()                         # a compile ran: a hit is not slowed by the sweep
        job = _WriteOnce(lambda: self._write(keys, produce, what))
        for key in keys:
            _PENDING[key] = job
        _pool().submit(job)

    def _write(self, keys: list[str], produce: Callable[[], bytes], what: str) -> None:
        try:
            entry = _pack(keys, produce())
            first = self._path(keys[0])
            write_atomically(first, entry, mode=0o600)
            for key in keys[1:]:
                _link(first, self._path(key))
            _USAGE.added(self.directory, len(entry) * len(keys), self.max_bytes)
        except Exception as exc:  # noqa: BLE001 - logged; the compile already succeeded
            log.warning("xlac cache: could not store %s (%s): %s", keys[0][:16], what, exc)
        finally:
            for key in keys:
                _PENDING.pop(key, None)

    def _path(self, key: str) -> Path:
        return self.directory / (key + _SUFFIX)


def _pack(keys: list[str], payload: bytes) -> bytes:
    header = json.dumps({"keys": keys, "sha256": _sha256_hex(payload),
                         "size": len(payload)}, sort_keys=True).encode()
    return _MAGIC + header + b"\n" + payload


def _unpack(entry: bytes, key: str) -> memoryview:
    newline = entry.find(b"\n", len(_MAGIC), 4096)
    if not entry.startswith(_MAGIC) or newline < 0:
        raise ValueError("not an xlac cache entry")
    line, payload = entry[len(_MAGIC):newline], memoryview(entry)[newline + 1:]
    try:
        header = json.loads(line)
        keys, checksum, size = list(header["keys"]), str(header["sha256"]), int(header["size"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"malformed header ({exc!r})") from None
    if key not in keys:
        raise ValueError("the entry was made for another key")
    if size != len(payload) or _sha256_hex(payload) != checksum:
        raise ValueError("checksum mismatch: the entry is corrupted")
    return payload


def _sha256_hex(data: bytes | memoryview) -> str:
    hasher = sha256(len(data))
    hasher.update(data)
    return hasher.hexdigest()


_SWEPT: list[int] = []


def _sweep_once() -> None:
    """Once per process that compiles: remove work directories a killed process left."""
    if os.getpid() not in _SWEPT:
        _SWEPT.append(os.getpid())
        removed = sweep_stale_work_directories()
        if removed:
            log.info("xlac: removed %d stale work directories", removed)


def _link(source: Path, target: Path) -> None:
    """``target`` as another name of ``source``, replacing what was there."""
    import threading  # here: a hit links nothing
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    os.link(source, temporary)
    os.replace(temporary, target)


_POOL: tuple[int, object] | None = None        # (pid, a ThreadPoolExecutor)
_PENDING: dict = {}                   # key -> the _WriteOnce storing its entry


class _WriteOnce:
    """A write that runs once, on whichever thread calls it first: the writer
    thread in queue order, or a look-up of one of its keys, which would
    otherwise wait for every write queued before it (a process compiling
    hundreds of programs runs far ahead of its one writer)."""

    def __init__(self, write: Callable[[], None]):
        import threading  # here: a hit writes nothing
        self._write = write
        self._lock = threading.Lock()
        self._done = False

    def __call__(self) -> None:
        with self._lock:              # a second caller waits for this one write only
            if not self._done:
                self._done = True
                self._write()


def _wait_for_pending(key: str) -> None:
    job = _PENDING.get(key)
    if job is not None and _POOL is not None and _POOL[0] == os.getpid():
        job()                         # (a forked child's copy may hold a dead thread's lock)


def _pool():
    """One writer thread per process (a forked child gets its own)."""
    from concurrent.futures import ThreadPoolExecutor  # here: a hit writes nothing
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():
        _POOL = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="xlac-cache"))
    return _POOL[1]


def flush() -> None:
    """Wait until every pending entry is written (tests, benchmarks)."""
    if _POOL is not None and _POOL[0] == os.getpid():
        _POOL[1].submit(lambda: None).result()     # (a job a look-up runs holds its lock)


def _touch(path: Path) -> None:
    try:
        os.utime(path)                 # eviction drops the least recently used
    except OSError:
        pass


_RESCAN_WRITES = 512


class _Usage:
    """Bytes in each cache directory this process wrote to, counted as it
    writes, scanned when the count passes the limit or has not been checked
    for ``_RESCAN_WRITES`` writes (other processes write there too)."""

    def __init__(self):
        self._bytes: dict[Path, int] = {}
        self._writes: dict[Path, int] = {}
        self._lock: tuple[int, object] | None = None    # (pid, a Lock): a fork gets its own

    def added(self, directory: Path, size: int, limit: int) -> None:
        if self._lock is None or self._lock[0] != os.getpid():
            import threading  # here: a hit writes nothing
            self._lock = (os.getpid(), threading.Lock())
        with self._lock[1]:
            total = self._bytes.get(directory)
            writes = self._writes.get(directory, 0) + 1
            if total is None or total + size > limit or writes >= _RESCAN_WRITES:
                total, writes = _evict(directory, limit), 0
            else:
                total += size
            self._bytes[directory], self._writes[directory] = total, writes


_USAGE = _Usage()


def _evict(directory: Path, limit: int) -> int:
    """Above ``limit``, drop the least recently used entries down to 90% of it
    (at exactly the limit every later write would scan again); the bytes left."""
    entries = []
    for item in os.scandir(directory):
        if item.name.endswith(_SUFFIX) and item.is_file(follow_symlinks=False):
            info = item.stat(follow_symlinks=False)
            entries.append((info.st_mtime, info.st_size, item.path))
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return total
    for _, size, path in sorted(entries):
        if total <= limit * 9 // 10:
            break
        Path(path).unlink(missing_ok=True)
        total -= size
    return total
