"""Starting the isolated parser's process: forked when that is safe, spawned otherwise.

A fresh interpreter takes a second or more to import MLIR; the CLIs (one
program per process) would pay that every run. A process with one thread can
fork instead: the child has everything imported already and starts in
milliseconds. So does a process whose only other threads are numpy's idle
BLAS pool, which the parser never touches and which OpenBLAS itself makes
safe across a fork (``xlac.mlir.fork_is_safe``): a user's script, once the
bindings' import started that pool or its own ``import numpy`` did. With other threads (a user's process
running JAX, or a pool of its own) a fork could copy a lock some other thread
held, so those spawn a fresh interpreter, once per process; the CLIs fork
anyway (``may_fork``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

_WORKER_MAIN = "from xlac.frontend import isolated_worker; isolated_worker.serve()"


def start_worker(stderr, serve, may_fork: bool = False):
    """A running worker with ``stdin``, ``stdout``, ``poll``, ``wait`` and ``kill``;
    forked, it runs ``serve(reader, writer)`` (``isolated_worker.serve``)."""
    from xlac.mlir import fork_is_safe
    if may_fork or fork_is_safe():
        return ForkedWorker(stderr, serve)
    return subprocess.Popen([sys.executable, "-c", _WORKER_MAIN], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)


class ForkedWorker:
    """A forked child serving requests on a pair of pipes; Popen's interface.
    Of the caller's descriptors it keeps ``keep`` and ``stderr`` (as its 2)."""

    def __init__(self, stderr, serve, keep: tuple[int, ...] = ()):
        from xlac.blas_pool import fork
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
