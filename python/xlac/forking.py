"""Forked helper processes (the isolated parser, the piece workers' seed):
Popen's interface over a fork, the descriptors and the threads around it.

A fork copies the calling thread alone: a lock another thread held stays held
in the child. ``xlac.mlir.fork_is_safe`` says when no thread but numpy's idle
pool runs; threads of xlac's own that can stop for a moment (the progress
display's clock) register here, and ``threads_paused`` stops them around the
check and the fork.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import time

from xlac.blas_pool import fork

_PAUSERS: list = []      # context-manager factories: inside, that thread is not running


def register_pauser(pause) -> None:
    """``pause()``: a context manager inside which a thread of xlac's does not run."""
    _PAUSERS.append(pause)


@contextlib.contextmanager
def threads_paused():
    """Every registered thread stopped inside (started again after)."""
    with contextlib.ExitStack() as stack:
        for pause in _PAUSERS:
            stack.enter_context(pause())
        yield


class ForkedWorker:
    """A forked child serving requests on a pair of pipes; Popen's interface.
    Of the caller's descriptors it keeps ``keep`` and ``stderr`` (as its 2)."""

    def __init__(self, stderr, serve, keep: tuple[int, ...] = ()):
        to_child, from_parent = os.pipe()
        to_parent, from_child = os.pipe()
        pid = fork()
        if pid == 0:                                      # the worker: never returns
            _serve_in_child(serve, to_child, from_child, stderr, (from_parent, to_parent), keep)
        os.close(to_child)
        os.close(from_child)
        self.pid = pid
        self.returncode = None
        self.stdin = os.fdopen(from_parent, "wb")
        self.stdout = os.fdopen(to_parent, "rb", buffering=0)

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("isolated parser", timeout)
            time.sleep(0.005)
        return self.returncode

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _serve_in_child(serve, reads: int, writes: int, stderr, parent_ends: tuple[int, int],
                    keep: tuple[int, ...]) -> None:
    status = 0
    try:
        gc.enable()              # forked during a compile, which pauses the collector (xlac.collector)
        for fd in parent_ends:
            os.close(fd)
        os.setsid()
        os.dup2(stderr.fileno(), 2)
        _crash_dumps_to_stderr()
        _only_own_descriptors(reads, writes, *keep)
        serve(os.fdopen(reads, "rb"), os.fdopen(writes, "wb"))
    except BaseException:  # noqa: BLE001 - the child must never return into the caller's code
        status = 70
    finally:
        os._exit(status)


def _crash_dumps_to_stderr() -> None:
    """A caller's faulthandler (pytest's, ``python -X faulthandler``) wrote to
    the caller's own stream: the child's crash dump goes to its stderr, the
    worker's error file, as a spawned worker's would."""
    import faulthandler
    if faulthandler.is_enabled():
        faulthandler.enable(file=2)


def _only_own_descriptors(*keep: int) -> None:
    """Close every descriptor the fork copied but ``keep`` and stderr: a fork
    holds all of the caller's (non-inheritable ones too; that flag is for
    exec), so a pipe the caller's process writes to a process of its own would
    not end while this child lives. Its stdin and stdout become /dev/null."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))
