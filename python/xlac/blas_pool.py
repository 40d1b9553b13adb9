"""Which of this process's threads are numpy's OpenBLAS pool, for
``xlac.mlir.fork_is_safe``.

Why: a fork copies the calling thread alone, so it is safe only where every
other thread is one that takes no lock the child needs. numpy's OpenBLAS pool
is such a thread (OpenBLAS shuts it down around a fork itself, its
``pthread_atfork`` handlers). When the MLIR bindings' import is what loads
numpy, its pool is the threads that import starts; when a script imported
numpy (or jax, or anything importing numpy) first, the pool is already there
and is told from other threads by count: every thread but the caller's must
be one of the pool's, as many as OpenBLAS says it runs. Anything unsure (no
/proc, another BLAS, OpenMP's pool, a Python thread, a thread that renamed
itself, a count that does not match) answers None: spawn.
"""

from __future__ import annotations

import os
import sys

_known: frozenset[str] = frozenset()       # the pool's thread ids, as last told


def note_pool(pool: frozenset[str]) -> None:
    """``pool``: numpy's pool's thread ids (``xlac.mlir`` tells them at its import)."""
    global _known
    _known = pool


def fork_is_safe() -> bool:
    """Whether this process may fork a helper now: the calling thread is its
    only one but numpy's idle pool (``xlac.mlir.fork_is_safe`` says why)."""
    now = threads()
    return now is not None and len(now - _known) == 1


def fork() -> int:
    """``os.fork``, the pool's threads forgotten in the parent: OpenBLAS shut
    them down around the fork (its ``pthread_atfork`` handler) and starts new
    ones at its next threaded call, ids unknown (a later fork then spawns; one
    reused by another thread must not pass for the pool's). Not started again
    here: a new pool spins for 0.12 s of CPU before it sleeps, and a compile
    makes no BLAS call, so the process stays single-threaded and the piece
    workers' fork after the parser's is safe without it."""
    import warnings
    with warnings.catch_warnings():     # 3.12+ warns of any fork beside other threads: these are the pool's
        warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
        pid = os.fork()
    if pid:
        note_pool(_known & (threads() or frozenset()))
    return pid


def threads() -> frozenset[str] | None:
    """This process's thread ids (None: unknown, where there is no /proc)."""
    try:
        return frozenset(os.listdir("/proc/self/task"))
    except OSError:
        return None


def pool_before_bindings(before: frozenset[str] | None) -> frozenset[str] | None:
    """The threads of ``before`` (taken ahead of the bindings' import) other
    than the caller's that are numpy's pool: none where the caller was alone,
    the pool where numpy was imported first and nothing else started a
    thread; None where that cannot be told."""
    import threading
    caller = str(threading.get_native_id())
    if before is None or caller not in before or threading.active_count() != 1:
        return None                     # no /proc, or a Python thread beside the caller
    others = before - {caller}
    if not others:
        return frozenset()
    if "numpy" not in sys.modules or not _named_like(caller, others):
        return None
    pool_size = _openblas_pthreads()
    return others if pool_size is not None and len(others) == pool_size - 1 else None


def _named_like(caller: str, others: frozenset[str]) -> bool:
    """OpenBLAS leaves its threads the process's name; a runtime that names
    its threads (XLA's, a user's ``prctl``) is not the pool."""
    try:
        names = {open(f"/proc/self/task/{tid}/comm").read() for tid in others | {caller}}
    except OSError:
        return False
    return len(names) == 1


def _openblas_pthreads() -> int | None:
    """The thread count of the one OpenBLAS loaded (its pool is that less the
    caller's), where it runs its own pthreads pool; None otherwise."""
    libraries = _loaded_openblas()
    if len(libraries) != 1:
        return None                     # none (another BLAS: MKL, Accelerate) or two pools
    import ctypes
    try:
        library = ctypes.CDLL(libraries.pop(), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return None
    get_parallel, get_num_threads = (_symbol(library, name) for name in ("get_parallel", "get_num_threads"))
    if get_parallel is None or get_num_threads is None or get_parallel() != 1:
        return None                     # 1: pthreads; 0 has no pool, 2 is OpenMP's (libgomp's) pool
    return get_num_threads()


def _loaded_openblas() -> set[str]:
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(maxsplit=5)[-1].strip() for line in maps if "openblas" in line}
    except OSError:
        return set()
    return {path for path in paths if os.path.basename(path).startswith(("libopenblas", "libscipy_openblas"))}


def _symbol(library, name: str):
    """``openblas_NAME`` under the prefixes and suffixes the builds use
    (numpy's wheels: ``scipy_openblas_NAME64_``)."""
    import ctypes
    for prefix in ("scipy_openblas_", "openblas_"):
        for suffix in ("64_", "_64_", ""):
            function = getattr(library, f"{prefix}{name}{suffix}", None)
            if function is not None:
                function.restype, function.argtypes = ctypes.c_int, []
                return function
    return None
