"""Piece workers forked by another piece worker, seen from the compiling process.

A program in pieces wants a worker per core. Each worker started on its own
paid Python's start, the bindings' imports, a context and LLVM's first set-up:
0.13-0.24 s of CPU, twice per compile on 2 cores. So the compiling process
starts one (the seed) and hands it the pipes of the others (its siblings); once
warmed up, the seed forks one on each (``piece_worker._fork_siblings``). A
sibling is a process of its own, as isolated as the seed: an LLVM abort in one
is a diagnostic of that piece, and the other goes on. It is the seed's child,
not ours, so it is watched through a pidfd; its pid comes as its first frame.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import tempfile

import xlac.pipes as pipes


def start_seed(errors, lock_path: str, sibling_spec: str, sibling_fds: list[int]):
    """A worker forked from this process where that is safe (``fork_is_safe``,
    the progress clock paused: its imports, 0.13-0.16 s of CPU, are ours
    already), else started: ``python -m xlac.targets.cpu.piece_worker``."""
    import functools
    import sys

    from xlac.forking import ForkedWorker, threads_paused
    from xlac.mlir import fork_is_safe
    from xlac.targets.cpu.piece_worker import serve_forked
    with threads_paused():
        if fork_is_safe():
            return ForkedWorker(errors, functools.partial(serve_forked, lock_path, sibling_spec),
                                keep=tuple(sibling_fds))
    return subprocess.Popen([sys.executable, "-m", "xlac.targets.cpu.piece_worker", lock_path,
                             sibling_spec], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=errors, start_new_session=True, pass_fds=sibling_fds)


class SiblingPipes:
    """The pipes and the error file of one sibling, both ends, until the seed starts."""

    def __init__(self):
        self.requests_theirs, self.requests_ours = os.pipe()
        self.answers_ours, self.answers_theirs = os.pipe()
        self.errors = tempfile.TemporaryFile()      # its last words, if it dies

    def theirs(self) -> tuple[int, int, int]:
        return self.requests_theirs, self.answers_theirs, self.errors.fileno()

    def spec(self) -> str:
        return ",".join(str(fd) for fd in self.theirs())

    def close_theirs(self) -> None:
        """Once the seed holds them: the sibling's death then closes our ends' pipes."""
        os.close(self.requests_theirs)
        os.close(self.answers_theirs)

    def sibling(self) -> SiblingProcess:
        return SiblingProcess(self.requests_ours, self.answers_ours)


class SiblingProcess:
    """What ``pieces._Worker`` uses of a ``Popen`` (stdin, stdout, poll, kill,
    wait), for a sibling: it is not our child, so a pidfd tells of its end."""

    def __init__(self, requests: int, answers: int):
        self.stdin = os.fdopen(requests, "wb")
        self.stdout = os.fdopen(answers, "rb")
        self.pid: int | None = None
        self._announced = False           # its pid read, or its pipe found closed first
        self._pidfd: int | None = None

    def started(self) -> bool:
        """Whether it runs (waits for its seed to fork it): False where the seed
        closed its pipes unforked (a seed of several threads must not fork) or died first."""
        if not self._announced:
            self._read_pid()
        return self.pid is not None

    def _read_pid(self) -> None:
        self._announced = True
        try:
            frame = pipes.read_frame(self.stdout)
        except (OSError, EOFError):
            frame = None
        if frame is None:
            return
        self.pid = int(frame)
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except OSError:                   # ended already: poll says so
            self._pidfd = None

    def poll(self) -> int | None:
        """None while it runs or may still be forked; else an exit status
        (its seed, not us, learns the real one)."""
        if not self._announced:
            if not select.select([self.stdout], [], [], 0)[0]:
                return None               # its seed is still warming up
            self._read_pid()
        if self._pidfd is None:
            return 1
        return 0 if select.select([self._pidfd], [], [], 0)[0] else None

    def kill(self) -> None:
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.wait(timeout=1)
            except subprocess.TimeoutExpired:
                self._forget()

    def wait(self, timeout: float | None = None) -> int:
        if self._pidfd is not None:
            if not select.select([self._pidfd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired("piece worker", timeout)
            self._forget()
        return 0

    def _forget(self) -> None:
        os.close(self._pidfd)
        self._pidfd = None
