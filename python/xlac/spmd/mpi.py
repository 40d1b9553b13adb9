"""The MPI shim compiled collectives call, and the MPI world of this process.

``xlac_mpi.c`` (beside this file) is compiled once per MPI installation with
that MPI's own compiler wrapper (``mpicc``) and kept in the compilation
cache's directory; the library is then loaded RTLD_GLOBAL before any code
that calls it is JIT-compiled (as libiomp5 is), and linked into
``xla-compile`` libraries. Which MPI: ``XLAC_MPICC`` / ``Options.mpicc``,
else the mpicc of the ``mpich`` wheel (``pip install 'xlac[distributed]'``),
else ``mpicc`` on PATH: the cluster's MPI (docs/distributed.md).
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import hashlib
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

from xlac.errors import CompileError, error
from xlac.files import write_atomically

SOURCE = Path(__file__).with_name("xlac_mpi.c")
SONAME = "libxlac_mpi.so"
_BYTES_CODE = 15               # DT_BYTES in xlac_mpi.c
_INSTALL_HINT = ("install MPI for Python with pip install 'xlac[distributed]' (mpi4py and "
                 "MPICH), or point XLAC_MPICC at your cluster MPI's mpicc")


def find_mpicc(configured: str = "") -> str:
    """The MPI compiler wrapper to build the shim with."""
    candidates = [configured] if configured else [str(Path(sys.executable).with_name("mpicc")),
                                                  "mpicc"]
    for name in candidates:
        found = shutil.which(name)
        if found:
            return found
    raise CompileError(error("this program uses collectives, which need MPI, and no mpicc "
                             f"was found (looked for {', '.join(candidates)})"), _INSTALL_HINT)


@functools.cache
def shim_library(mpicc: str, cache_dir: Path | None) -> str:
    """Path of ``libxlac_mpi.so`` built with ``mpicc``, built now if it is not yet."""
    flags = _run([mpicc, "-show"], "asking mpicc for its flags")
    key = hashlib.sha256(SOURCE.read_bytes() + flags.encode()).hexdigest()[:16]
    base = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "xlac-mpi"
    directory = base / "mpi-shim" / key
    library = directory / SONAME
    if not library.exists():
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=directory) as work:
            built = Path(work) / SONAME
            _run([mpicc, "-O2", "-shared", "-fPIC", "-Wall", f"-Wl,-soname,{SONAME}",
                  "-o", str(built), str(SOURCE)], "building xlac's MPI shim")
            write_atomically(library, built.read_bytes(), mode=0o755)
    return str(library)


def _run(command: list[str], what: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except OSError as exc:
        raise CompileError(error(f"{what} failed: {exc}"), _INSTALL_HINT) from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()[-6:]
        raise CompileError([error(f"{what} failed: {line}") for line in lines] or
                           [error(f"{what} failed")], "command: " + " ".join(command))
    return done.stdout


class MpiWorld:
    """This process's MPI: the shim loaded, MPI initialized (or reused if
    mpi4py did it first), finalized at exit if the shim started it.

    With more than one rank, an uncaught Python exception aborts the whole
    job with its message (as ``python -m mpi4py`` does): a rank that died
    silently would leave the others waiting in a collective forever.
    """

    def __init__(self, library: str):
        self.library = library
        self._lib = load_shim(library)
        self._lib.xlac_mpi_abort.argtypes = [ctypes.c_int, ctypes.c_char_p]
        self._lib.xlac_mpi_agree.argtypes = [ctypes.c_int32]
        self.rank = self._lib.xlac_mpi_init()
        self.size = self._lib.xlac_mpi_world_size()
        atexit.register(self._lib.xlac_mpi_finalize)
        if self.size > 1:
            sys.excepthook = self._abort_on_uncaught

    def agree(self, ok: bool) -> bool:
        """Collective: True when every rank says ok."""
        return bool(self._lib.xlac_mpi_agree(1 if ok else 0))

    def comm_create(self, groups: list[list[int]]) -> int:
        """Collective: an MPI communicator for these groups of ranks (a shim slot)."""
        table = (ctypes.c_int64 * (len(groups) * len(groups[0])))(*[r for g in groups for r in g])
        return self._lib.xlac_mpi_comm_create(table, ctypes.c_int64(len(groups)),
                                              ctypes.c_int64(len(groups[0])))

    def broadcast_bytes(self, slot: int, data: bytes) -> bytes:
        """Collective: the first member's ``data`` on every member of this rank's group."""
        buffer = ctypes.create_string_buffer(data, len(data))
        self._lib.xlac_mpi_collective_broadcast(slot, buffer, buffer, ctypes.c_int64(len(data)),
                                                _BYTES_CODE)
        return buffer.raw

    def blocked(self) -> tuple[float, int]:
        """Seconds this rank spent blocked in collectives (blocking calls and the
        waits of started ones) and how many such calls, since ``reset_blocked``:
        the communication the computation did not hide."""
        seconds, calls = ctypes.c_double(), ctypes.c_int64()
        self._lib.xlac_mpi_blocked(ctypes.byref(seconds), ctypes.byref(calls))
        return seconds.value, calls.value

    def reset_blocked(self) -> None:
        self._lib.xlac_mpi_reset_blocked()

    def abort(self, message: str, code: int = 1) -> None:
        """Stop every rank of the job, printing ``message`` from this one."""
        sys.stdout.flush()
        self._lib.xlac_mpi_abort(code, message.encode(errors="replace"))

    def _abort_on_uncaught(self, kind, value, trace) -> None:
        _abort_with(self, kind, value, trace)


_WORLD: MpiWorld | None = None


@functools.cache
def load_shim(library: str) -> ctypes.CDLL:
    """dlopen the shim RTLD_GLOBAL (MPI is not started): compiled code that
    calls it can then be JIT-compiled and linked."""
    return ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)


def shim_for(options) -> str:
    """The shim library for ``options`` (built if need be), loaded."""
    library = shim_library(find_mpicc(options.mpicc), options.cache_dir)
    load_shim(library)
    return library


def mpi_world(mpicc: str = "", cache_dir: Path | None = None) -> MpiWorld:
    """The process's MPI world, started on first use."""
    global _WORLD
    if _WORLD is None:
        _WORLD = MpiWorld(shim_library(find_mpicc(mpicc), cache_dir))
    return _WORLD


def active_world() -> MpiWorld | None:
    """The MPI world if this process started one, else None (nothing is started)."""
    return _WORLD


def abort_job_on_uncaught_errors(options) -> None:
    """In a process an MPI launcher started (``options.launched_ranks`` > 1), make an
    uncaught exception stop the whole job, even before this rank joined MPI.

    Why: a rank that fails before ``MPI_Init`` (a bad input file, a parse
    error) exits without telling the launcher, and ranks already waiting for
    it wait forever. Joining MPI just to abort lets MPI_Abort stop them all.
    """
    if options.launched_ranks <= 1 or _WORLD is not None or \
            getattr(sys.excepthook, "__self__", None) is _job_guard:
        return
    _job_guard.options = options
    sys.excepthook = _job_guard.abort


class _JobGuard:
    options = None

    def abort(self, kind, value, trace) -> None:
        try:
            world = mpi_world(self.options.mpicc, self.options.cache_dir)
        except Exception:  # noqa: BLE001 - no MPI to stop the others with: exit at least
            traceback.print_exception(kind, value, trace)
            sys.exit(1)
        _abort_with(world, kind, value, trace)


def _abort_with(world, kind, value, trace) -> None:
    """Say why first (another rank's abort may end this process any moment),
    then the traceback, then stop every rank."""
    message = f"uncaught {kind.__name__}: {value}; stopping every rank"
    print(f"xlac: rank {world.rank}: {message}", file=sys.stderr, flush=True)
    traceback.print_exception(kind, value, trace)
    sys.stderr.flush()
    world.abort(message)


_job_guard = _JobGuard()
