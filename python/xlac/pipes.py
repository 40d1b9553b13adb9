"""Messages over a worker process's pipes, framed: an 8-byte little-endian length,
then that many bytes.

A pipe hands bytes over in whatever pieces it likes, so a reader needs each
message's length to know where it ends, and must tell a worker that finished
(its pipe closed between frames) from one that died mid-answer (closed inside
one). The isolated parser, the piece compilers and the reference server each
speak their own protocol in these frames. Standard modules only, and light
ones: the workers import this first thing, and their callers on every compile.
"""

from __future__ import annotations

import os
import select
import signal
import struct
import subprocess
import time

_LENGTH = struct.Struct("<Q")
_CHUNK = 1 << 22                 # bytes asked of os.read at once


def write_frames(stream, *frames: bytes) -> None:
    """Each frame, length first, then a flush: the reader waits for whole frames."""
    for frame in frames:
        stream.write(_LENGTH.pack(len(frame)))
        stream.write(frame)
    stream.flush()


def read_frame(stream) -> bytes | None:
    """The next frame from a blocking binary ``stream``, or None where the stream
    ends before one; EOFError where it ends inside one."""
    length = _read_upto(stream.read, _LENGTH.size)
    return _rest_of_frame(length, stream.read) if length else None


def read_frames(stream, count: int) -> list[bytes] | None:
    """The next ``count`` frames (one message of that many parts), or None where
    the stream ends before them; EOFError where it ends inside them."""
    first = read_frame(stream)
    if first is None:
        return None
    rest = [read_frame(stream) for _ in range(count - 1)]
    if None in rest:
        raise EOFError(f"the pipe closed inside a message of {count} frames")
    return [first, *rest]


def read_frame_by(fd: int, deadline: float) -> bytes:
    """The next frame from file descriptor ``fd`` before ``deadline``
    (``time.monotonic()``): TimeoutError past it, EOFError where the pipe
    closes first (the writer exited or died)."""
    def read(size: int) -> bytes:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError
        return os.read(fd, min(size, _CHUNK))

    length = _read_upto(read, _LENGTH.size)
    if not length:
        raise EOFError("the pipe closed before a frame")
    return _rest_of_frame(length, read)


def _rest_of_frame(length: bytes, read) -> bytes:
    """The data of the frame that begins with ``length``, read to its end."""
    if len(length) < _LENGTH.size:
        raise EOFError(f"the pipe closed inside a frame's length "
                       f"({len(length)} of {_LENGTH.size} bytes)")
    (size,) = _LENGTH.unpack(length)
    data = _read_upto(read, size)
    if len(data) < size:
        raise EOFError(f"the pipe closed inside a frame ({len(data)} of {size} bytes)")
    return data


def _read_upto(read, size: int) -> bytes:
    """``size`` bytes from ``read(n)``, which may return fewer; fewer only where
    the pipe ends."""
    chunks, left = [], size
    while left:
        chunk = read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def reap(process: subprocess.Popen) -> int:
    """The exit status of a worker whose pipe closed (it had 10 s to exit; then
    it is killed, and the status is -SIGKILL)."""
    try:
        return process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        kill(process)
        return -signal.SIGKILL


def kill(process: subprocess.Popen | None) -> None:
    """Kill a worker that still runs, and wait for it."""
    if process is not None and process.poll() is None:
        process.kill()
        process.wait()
