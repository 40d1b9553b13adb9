"""Calling code JIT-compiled for the host CPU by MLIR's ExecutionEngine.

The entry function uses the bare-pointer ABI: one pointer per argument, then
one per result (the results were turned into out-parameters), so a call is
a packed array of pointers to pointers and nothing else.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from importlib import metadata

from xlac.errors import CompileError, collect_diagnostics, compile_error_from
from xlac.mlir import ExecutionEngine, ir

_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
THREADS_ENV = "XLAC_NUM_THREADS"


def configured_threads() -> int:
    """Threads parallel loops are split for: $XLAC_NUM_THREADS, else every core we may use.

    Read at compile time (docs/cpu-runtime.md): XLAC_NUM_THREADS=1 compiles
    programs without parallel loops, so they never enter the OpenMP runtime.
    """
    text = os.environ.get(THREADS_ENV, "").strip()
    if text.isdigit() and int(text) > 0:
        return int(text)
    return len(os.sched_getaffinity(0))


@functools.cache
def openmp_library() -> str | None:
    """Load libiomp5 (intel-openmp wheel) for the `__kmpc_*` calls of omp.parallel.

    Loaded RTLD_GLOBAL once per process, before any engine, so the JIT's
    symbol lookup finds it. None when the wheel is missing: programs without
    parallel loops still run.
    """
    try:
        files = metadata.distribution("intel-openmp").files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == "libiomp5.so":
            path = str(file.locate().resolve())
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            return path
    return None


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3      # glibc mallopt parameters
MALLOC_ENV = "XLAC_MALLOC_TUNING"


@functools.cache
def keep_freed_memory() -> bool:
    """Let glibc keep freed blocks up to 32 MiB for reuse instead of unmapping them.

    Why: compiled code mallocs its temporaries (and numpy its outputs) on
    every call. Above glibc's default mmap threshold each one is a fresh
    mmap whose pages fault in one by one (~6 ms of a 2 ms softmax); kept in
    the heap they are reused warm. Process-wide; XLAC_MALLOC_TUNING=0 skips
    it (docs/cpu-runtime.md).
    """
    if os.environ.get(MALLOC_ENV, "1") == "0":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
                    and libc.mallopt(_M_TRIM_THRESHOLD, 512 << 20))
    except (OSError, AttributeError):     # not glibc: nothing to tune
        return False


def _runtime_libraries() -> list[str]:
    # libm resolves tanh, erf, atan2 ... that convert-math-to-libm calls;
    # libiomp5 the __kmpc_* calls of parallel loops.
    found = ctypes.util.find_library("m")
    openmp = openmp_library()
    return ([found] if found else []) + ([openmp] if openmp else [])


def runtime_libraries() -> list[str]:
    """Libraries compiled code calls into: the JIT loads them, and the
    ahead-of-time link step (``xlac.artifact.link``) links against them."""
    return _runtime_libraries()


class CpuFunction:
    """One JIT-compiled entry point; call it with raw data pointers."""

    def __init__(self, module: ir.Module, entry: str, opt_level: int = 3):
        ctx = module.context
        openmp_library()
        keep_freed_memory()
        with ctx, collect_diagnostics(ctx) as diags:
            try:
                # PIC: the same object code can be linked into a shared
                # library by write_object (xla-compile, serialize, the cache)
                self._engine = ExecutionEngine(module, opt_level=opt_level, enable_pic=True)
            except (RuntimeError, ir.MLIRError) as exc:
                raise compile_error_from(exc, diags, "the LLVM JIT rejected the module") from None
        address = self._engine.raw_lookup(entry)
        if not address:
            raise CompileError(f"<unknown>: error: the JIT has no function '{entry}'")
        self._function = _PACKED(address)

    def __call__(self, pointers: list[int]) -> None:
        """Call with the data pointers of every input, then every output."""
        slots = (ctypes.c_void_p * len(pointers))(*pointers)
        packed = (ctypes.c_void_p * len(pointers))(
            *[ctypes.addressof(slots) + i * ctypes.sizeof(ctypes.c_void_p)
              for i in range(len(pointers))])
        self._function(packed)

    def write_object(self, path: str) -> None:
        """Write the compiled machine code as a relocatable object file."""
        self._engine.dump_to_object_file(str(path))
