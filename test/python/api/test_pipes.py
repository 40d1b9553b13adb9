"""xlac.pipes: frames over a real pipe, and the two ways a pipe can end (between
frames: the worker is done; inside one: it died mid-answer)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time

import pytest

from xlac import pipes


@pytest.fixture
def pipe():
    """A pipe's reading end (a file descriptor) and its writing end (a stream)."""
    reads, writes = os.pipe()
    writer = os.fdopen(writes, "wb")
    yield reads, writer
    os.close(reads)
    if not writer.closed:
        writer.close()


def test_frames_come_back_whole_and_in_order(pipe):
    reads, writer = pipe
    big = bytes(range(256)) * 4000               # more than a pipe holds: read while written

    def write():
        pipes.write_frames(writer, b'{"name": "x"}', b"", big)
        writer.close()

    threading.Thread(target=write).start()
    with os.fdopen(os.dup(reads), "rb") as stream:
        assert pipes.read_frames(stream, 2) == [b'{"name": "x"}', b""]
        assert pipes.read_frame(stream) == big
        assert pipes.read_frame(stream) is None          # closed between frames: the end


def test_a_stream_closed_inside_a_frame_or_a_message_is_an_eof_error():
    whole = io.BytesIO()
    pipes.write_frames(whole, b"header", b"payload")
    data = whole.getvalue()
    with pytest.raises(EOFError, match=r"inside a frame's length \(3 of 8 bytes\)"):
        pipes.read_frame(io.BytesIO(data[:3]))
    with pytest.raises(EOFError, match=r"inside a frame \(2 of 6 bytes\)"):
        pipes.read_frame(io.BytesIO(data[:10]))
    with pytest.raises(EOFError, match="inside a message of 2 frames"):
        pipes.read_frames(io.BytesIO(data[:14]), 2)


def test_reading_by_a_deadline_times_out_or_sees_the_writer_gone(pipe):
    reads, writer = pipe
    pipes.write_frames(writer, b"answer")
    assert pipes.read_frame_by(reads, time.monotonic() + 5) == b"answer"
    with pytest.raises(TimeoutError):
        pipes.read_frame_by(reads, time.monotonic() + 0.05)
    writer.write(b"\x09\x00")                             # part of a length, then the end
    writer.close()
    with pytest.raises(EOFError, match="inside a frame's length"):
        pipes.read_frame_by(reads, time.monotonic() + 5)
    with pytest.raises(EOFError, match="before a frame"):
        pipes.read_frame_by(reads, time.monotonic() + 5)


def test_no_heavy_module_comes_with_it():
    code = ("import sys, xlac.pipes\n"
            "print([m for m in ('numpy', 'xlac.mlir', 'xlac.errors') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
