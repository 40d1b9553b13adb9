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

import subprocess
import sys

from xlac.forking import ForkedWorker, threads_paused

_WORKER_MAIN = "from xlac.frontend import isolated_worker; isolated_worker.serve()"


def start_worker(stderr, serve, may_fork: bool = False):
    """A running worker with ``stdin``, ``stdout``, ``poll``, ``wait`` and ``kill``;
    forked, it runs ``serve(reader, writer)`` (``isolated_worker.serve``)."""
    from xlac.mlir import fork_is_safe
    with threads_paused():                    # the progress clock: not copied mid-draw
        if may_fork or fork_is_safe():
            return ForkedWorker(stderr, serve)
    return subprocess.Popen([sys.executable, "-c", _WORKER_MAIN], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
