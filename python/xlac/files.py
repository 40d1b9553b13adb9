"""Files xlac writes and reads back: atomically written, checked when read."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path


def write_atomically(path: Path, data: bytes | str, mode: int = 0o644) -> None:
    """Write ``path`` so that readers see the old file or the new one, never half."""
    path = Path(path)
    import tempfile  # here: a cache hit writes nothing
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_private(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file only this user can write and
    at most ``limit`` bytes long; ValueError (or OSError) saying why not otherwise.

    Opened without following a symlink and without blocking (a FIFO put in
    its place must not hang the reader), then checked on the open descriptor.
    """
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise ValueError("not a regular file")    # not even opened: devices, FIFOs, links
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        _check_readable(info, limit)
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ValueError("owned or writable by another user")
        # the size it has, plus one to see it grow: a read of `limit` bytes makes a
        # buffer that big and shrinks it (a 5.6 MB cache entry: 1.6-4.5 ms against 0.6-3)
        return handle.read(min(info.st_size, limit) + 1)


def private_directory(directory: Path) -> str:
    """Create ``directory`` mode 0700; say what is wrong if it is unsafe ("" if fine)."""
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


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes
    that is not sparse; ValueError (or OSError) saying why not otherwise.

    A FIFO, device or directory is not even opened (a FIFO would hang the
    reader); the file is opened without blocking and checked again on the
    descriptor, in case it was swapped meanwhile.
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError("not a regular file")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        _check_readable(info, limit)
        return handle.read(min(info.st_size, limit) + 1)    # as read_private: no shrinking copy


def _check_readable(info: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("not a regular file")
    if info.st_size > limit:
        raise ValueError(f"{info.st_size} bytes, more than the {limit} allowed")
    if is_sparse(info):
        raise ValueError(f"a sparse file ({info.st_size} bytes, of which "
                         f"{info.st_blocks * 512} are stored): xlac writes none")


def is_sparse(info: os.stat_result) -> bool:
    """Mostly holes: a file claiming far more bytes than the disk holds for it
    (reading one would fill memory with zeros). Lenient enough for compressing
    file systems: over 64 MiB, with less than an eighth of it stored."""
    stored = getattr(info, "st_blocks", None)
    return stored is not None and info.st_size > (64 << 20) and stored * 512 < info.st_size // 8


WORK_PREFIXES = ("xlac-link-", "xlac-load-", "xlac-aot-", "xlac-cache-")
STALE_SECONDS = 3600


def sweep_stale_work_directories(root: Path | None = None) -> int:
    """Remove this user's xlac work directories (``WORK_PREFIXES``) in the temp
    directory untouched for an hour: what a killed process left. Returns how many."""
    import shutil  # here, as below: a cache hit imports neither
    import tempfile
    root = Path(root or tempfile.gettempdir())
    removed = 0
    try:
        items = list(os.scandir(root))
    except OSError:
        return 0
    for item in items:
        if not item.name.startswith(WORK_PREFIXES):
            continue
        try:
            info = item.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and \
                time.time() - info.st_mtime > STALE_SECONDS:
            shutil.rmtree(item.path, ignore_errors=True)
            removed += 1
    return removed


def keep_newest(directory: Path, count: int) -> None:
    """Remove all but the ``count`` most recently changed entries of ``directory``."""
    import shutil
    try:
        items = sorted(os.scandir(directory), key=lambda i: i.stat(follow_symlinks=False).st_mtime)
    except OSError:
        return
    for item in items[:-count] if count else items:
        if item.is_dir(follow_symlinks=False):
            shutil.rmtree(item.path, ignore_errors=True)
        else:
            Path(item.path).unlink(missing_ok=True)


def find_c_compiler() -> str | None:
    """The system C compiler: ``$CC``, else cc, gcc or clang (None: none found)."""
    import shutil  # here: a cache hit compiles nothing
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def built_library(source: Path) -> Path:
    """The C file ``source`` built once per content into a shared library, kept
    in a directory of this user's alone under the temp folder (a library that
    another user could put there would be loaded, some of them preloaded);
    OSError, ValueError or subprocess.CalledProcessError saying why it cannot be."""
    import hashlib
    import subprocess
    import tempfile
    compiler = find_c_compiler()
    if compiler is None:
        raise FileNotFoundError("no C compiler (cc, gcc or clang; or set $CC)")
    code = Path(source).read_bytes()
    directory = Path(tempfile.gettempdir()) / f"xlac-built-{os.getuid()}"
    problem = private_directory(directory)
    if problem:
        raise ValueError(problem)
    library = directory / f"{Path(source).stem}-{hashlib.sha256(code).hexdigest()[:16]}.so"
    if not library.exists():
        partial = directory / f".{library.name}.{os.getpid()}"
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(partial), str(source)],
                       check=True, capture_output=True)
        os.replace(partial, library)
    return library
