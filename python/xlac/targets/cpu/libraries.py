"""The libraries CPU code needs at run time, and process-wide runtime tuning.

Shared by the JIT (loaded before an engine is made), the ahead-of-time link
(``xlac.targets.cpu.serialize`` links against them) and loaded artifacts.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re

from xlac.errors import CompileError, error
from xlac.targets.cpu.idle_workers import start_following

SPIN_MS = "1"          # KMP_BLOCKTIME where this process has cores to itself


@functools.cache
def idle_workers_sleep() -> int | None:
    """How long libiomp5's idle workers spin before they sleep: 1 ms, or not
    at all where the cores are busy with other processes' work.

    Why: a worker that sleeps at once costs a futex wake (tens of
    microseconds) at every parallel region; a transformer runs 190 of them
    per call (BERT: 41 ms sleeping at once, 21 ms spinning 1 ms; XLA's pool
    spins too). But on a machine whose cores other processes keep busy, a
    spinning worker and a spinning barrier hold a core the thread with the
    work needs (an N-body `lax.scan` with two CPU-bound processes beside it:
    34 ms sleeping, 132 ms spinning). So it is decided once, from the tasks
    runnable right now, before libiomp5 reads it at its first parallel
    region; both the JIT and a loaded library call this before running
    anything. The user's own KMP_BLOCKTIME wins (docs/cpu-runtime.md); one
    inherited from an xlac process (``CHOSEN`` says so) is chosen again.
    Returns the blocktime it set, None where the user set it. Later calls
    look at the load again (``idle_workers.follow_load``).
    """
    blocktime = os.environ.get("KMP_BLOCKTIME")
    if blocktime is None or blocktime == os.environ.get(CHOSEN):
        chosen = "0" if cores_busy_elsewhere() else SPIN_MS
        os.environ["KMP_BLOCKTIME"] = os.environ[CHOSEN] = chosen
        return int(chosen)                           # ours: idle_workers.follow_load may change it
    return None


# The blocktime xlac chose, beside KMP_BLOCKTIME, so that a process started
# from this one (which inherits both) chooses afresh rather than take the
# parent's choice for the user's: a child that inherited `1` from a parent
# started on quiet cores spun for good under load (a fresh process's FFT
# 180x720 c64: 0.72-0.90 ms its fastest call, medians 1-5 ms; 0.49 / 0.5-0.7
# choosing itself; load 6-7 on 2 cores).
CHOSEN = "KMP_BLOCKTIME_CHOSEN_BY_XLAC"


def cores_busy_elsewhere(samples: int = 3) -> bool:
    """Whether other runnable tasks fill every core this process may use, in
    each of ``samples`` looks at /proc/loadavg a millisecond apart (a moment's
    burst is not load). False where /proc/loadavg cannot be read."""
    import time
    cores = len(os.sched_getaffinity(0))
    for sample in range(samples):
        try:
            with open("/proc/loadavg") as handle:
                running = int(handle.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return False
        if running - 1 < cores:                     # ourselves not counted
            return False
        if sample + 1 < samples:
            time.sleep(0.001)
    return True


def openmp_library() -> str | None:
    """Load libiomp5 (intel-openmp wheel) for the `__kmpc_*` calls of omp.parallel.

    Loaded RTLD_GLOBAL once per process, before any engine, so the JIT's
    symbol lookup finds it. None when the wheel is missing: programs without
    parallel loops still run.
    """
    blocktime = idle_workers_sleep()
    path = _load_openmp()
    start_following(path, blocktime)
    return path


@functools.cache
def _load_openmp() -> str | None:
    """Found and loaded once: the package metadata look-up took 3-4 ms, paid
    by every piece a worker compiled."""
    path = installed_file("intel-openmp", "libiomp5.so")
    if path is None:
        path = _metadata_file("intel-openmp", "libiomp5.so")
    if path is not None:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return path


def installed_file(distribution: str, file_name: str) -> str | None:
    """The file named ``file_name`` that ``distribution`` installed, found in the
    RECORD of its ``.dist-info`` on ``sys.path`` (``xlac.distributions``: the
    first such, as ``importlib.metadata`` finds it); None where there is none to read.

    Why not ``importlib.metadata``: importing it (with email, zipfile, csv) cost
    24-27 ms of CPU (AMD EPYC Zen 4, load 7) in a process's first compile, whose
    link step asks for libiomp5 while the program waits; reading the one RECORD
    costs about a millisecond."""
    from xlac.distributions import dist_info
    found = dist_info(distribution)
    return _recorded(found, file_name) if found is not None else None


def _recorded(dist_info: str, file_name: str) -> str | None:
    """``file_name``'s path from a ``.dist-info``'s RECORD (lines ``path,hash,size``,
    the path relative to the directory holding the ``.dist-info``)."""
    try:
        with open(os.path.join(dist_info, "RECORD"), encoding="utf-8") as record:
            lines = record.read().splitlines()
    except OSError:
        return None
    for line in lines:
        path = line.rsplit(",", 2)[0]
        if len(path) > 1 and path[0] == path[-1] == '"':        # csv quoting
            path = path[1:-1].replace('""', '"')
        if path.rsplit("/", 1)[-1] == file_name:
            return os.path.realpath(os.path.join(os.path.dirname(dist_info), path))
    return None


def _metadata_file(distribution: str, file_name: str) -> str | None:
    """``installed_file`` through ``importlib.metadata`` (an egg, a zip, ...)."""
    from importlib import metadata  # here: slow to import, and no cache hit needs it
    try:
        files = metadata.distribution(distribution).files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == file_name:
            return str(file.locate().resolve())
    return None


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -3, -4      # glibc mallopt parameters


def keep_freed_memory(enabled: bool = True) -> bool:
    """Let glibc keep freed blocks of any size for reuse instead of unmapping them.

    Why: compiled code mallocs its temporaries (and numpy its outputs) on
    every call. A block glibc maps on its own is a fresh mmap whose pages
    fault in one by one (~6 ms of a 2 ms softmax); kept in the heap it is
    reused warm. The mmap threshold stops at 32 MiB (glibc refuses more), so
    no block is mapped on its own at all (M_MMAP_MAX 0): the U-Net's 32 MiB
    attention scores faulted in every call, 140 -> 65 ms for its attention.
    glibc still maps memory when the heap cannot grow. Process-wide, once;
    ``enabled=False`` (XLAC_MALLOC_TUNING=0) skips it (docs/cpu-runtime.md).
    """
    return enabled and _tune_malloc()


@functools.cache
def _tune_malloc() -> bool:
    try:
        libc = ctypes.CDLL(None)    # the process's own libc: find_library("c") runs ldconfig
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
                    and libc.mallopt(_M_MMAP_MAX, 0)
                    and libc.mallopt(_M_TRIM_THRESHOLD, 512 << 20))
    except (OSError, AttributeError):     # not glibc: nothing to tune
        return False


def _runtime_libraries() -> list[str]:
    # libm resolves tanh, erf, atan2 ... that convert-math-to-libm calls;
    # libiomp5 the __kmpc_* calls of parallel loops.
    found = _libm()
    openmp = openmp_library()
    return ([found] if found else []) + ([openmp] if openmp else [])


@functools.cache
def _libm() -> str | None:
    """libm's soname, looked up once per process: ``find_library`` runs
    ``ldconfig -p`` in a child process at every call (each link of a compile)."""
    import ctypes.util
    return ctypes.util.find_library("m")


def runtime_libraries() -> list[str]:
    """Libraries compiled code calls into: the JIT loads them, and the
    ahead-of-time link step (``xlac.targets.cpu.serialize``) links against them."""
    return _runtime_libraries()


# LAPACK/BLAS's Fortran names: a type letter, the routine, an underscore (ssyevd_).
_FORTRAN_NAME = re.compile(r"^[sdcz][a-z0-9]{2,6}_$")
LAPACK_PREFIX = "scipy_"               # scipy-openblas exports ssyevd_ as scipy_ssyevd_
LAPACK_HINT = ("LAPACK comes from SciPy's wheel (the OpenBLAS jaxlib's CPU backend calls): "
               "pip install 'xlac[lapack]' (scipy)")


@functools.cache
def lapack_library() -> str | None:
    """The OpenBLAS (BLAS + LAPACK) in SciPy's wheel, loaded; None without SciPy.

    Why this one: it is the LAPACK jaxlib calls for jnp.linalg on the CPU
    (through scipy.linalg.cython_lapack), so xlac's results are XLA's; it is
    a maintained build that pip installs with JAX; and, unlike a Python-level
    function pointer, it is a shared library that artifacts can link.
    """
    from importlib import metadata  # here: slow to import, and no cache hit needs it
    try:
        files = metadata.distribution("scipy").files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name.startswith("libscipy_openblas") and ".so" in file.name:
            path = str(file.locate().resolve())
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            return path
    return None


def lapack_names(names) -> list[str]:
    """Those of ``names`` (a module's external functions) that are LAPACK/BLAS's."""
    return sorted(n for n in names if _FORTRAN_NAME.match(n))


def lapack_addresses(names) -> dict[str, int]:
    """Where each LAPACK/BLAS function of ``names`` is (for the JIT to bind);
    CompileError, saying what to install, when there is no LAPACK."""
    wanted = lapack_names(names)
    if not wanted:
        return {}
    path = lapack_library()
    if path is None:
        raise CompileError(error(f"this program calls LAPACK ({', '.join(wanted)}) and no "
                                 "LAPACK was found"), LAPACK_HINT)
    library = ctypes.CDLL(path)
    found = {}
    for name in wanted:
        try:
            found[name] = ctypes.cast(getattr(library, LAPACK_PREFIX + name), ctypes.c_void_p).value
        except AttributeError:
            raise CompileError(error(f"{path} has no {LAPACK_PREFIX}{name}"), LAPACK_HINT) from None
    return found
