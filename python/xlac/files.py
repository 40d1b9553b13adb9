"""Files xlac writes and reads back: atomically written, checked when read."""

from __future__ import annotations

import os
import stat
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
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ValueError("owned or writable by another user")
        if info.st_size > limit:
            raise ValueError(f"{info.st_size} bytes, more than the {limit} allowed")
        return handle.read(limit + 1)


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
