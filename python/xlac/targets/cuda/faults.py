"""Faults a program meets on the GPU, as errors a user can act on.

Out of device memory is a ``ResourceLimitError`` naming the bytes asked for
and the bytes free; the call's partial allocations are freed, so the
executable and the process stay usable. A kernel fault (an illegal address, a
trap) is sticky in CUDA: every later driver call of the process on that GPU
fails with it, launches included, so the first one becomes a ``KernelFault``
naming the kernel launched last and the GPU is marked lost: later calls raise
``GpuContextLost`` at once instead of reaching a broken context.
"""

from __future__ import annotations

import contextlib
import threading
import weakref

from xlac.errors import ResourceLimitError, error
from xlac.targets.cuda.errors import CudaError, GpuContextLost, KernelFault

OUT_OF_MEMORY = 2                          # CUDA_ERROR_OUT_OF_MEMORY
# The errors after which the context is unusable (cuda.h: "the process must be terminated").
STICKY = {700: "CUDA_ERROR_ILLEGAL_ADDRESS", 702: "CUDA_ERROR_LAUNCH_TIMEOUT",
          710: "CUDA_ERROR_ASSERT", 714: "CUDA_ERROR_HARDWARE_STACK_ERROR",
          715: "CUDA_ERROR_ILLEGAL_INSTRUCTION", 716: "CUDA_ERROR_MISALIGNED_ADDRESS",
          717: "CUDA_ERROR_INVALID_ADDRESS_SPACE", 718: "CUDA_ERROR_INVALID_PC",
          719: "CUDA_ERROR_LAUNCH_FAILED"}

_LOST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # driver -> why its context is lost
_LAUNCHED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # driver -> the kernel launched last
_LOST_LOCK = threading.Lock()


@contextlib.contextmanager
def guarded_call(driver, program):
    """Run one call of ``program`` (a CudaFunction) on ``driver``, its driver
    errors translated (module docstring)."""
    lost = _LOST.get(driver)
    if lost is not None:
        raise GpuContextLost(lost)
    try:
        if hasattr(driver, "make_current"):
            driver.make_current()                     # this thread may be new to the context
        yield
    except CudaError as exc:
        if isinstance(exc, GpuContextLost):
            raise
        if exc.status == OUT_OF_MEMORY:
            limit = out_of_memory(driver, exc)         # free memory as the allocation saw it
            program.close()                            # then what this call allocated: freed
            raise limit from None
        if exc.status in STICKY:
            raise _fault(driver, program.last_kernel, program.in_graph, exc) from None
        raise


def launched(driver, kernel: str) -> None:
    """Note ``kernel`` as the one launched last on ``driver``: a fault that a later
    wait finds (a DeviceArray read after an asynchronous call) names it."""
    _LAUNCHED[driver] = kernel


@contextlib.contextmanager
def guarded_wait(driver):
    """A wait for work enqueued earlier (reading a DeviceArray): a kernel fault it
    finds is a KernelFault naming the kernel launched last on ``driver``, and a
    context lost before is GpuContextLost, as for a call."""
    lost = _LOST.get(driver)
    if lost is not None:
        raise GpuContextLost(lost)
    try:
        yield
    except CudaError as exc:
        if isinstance(exc, GpuContextLost) or exc.status not in STICKY:
            raise
        raise _fault(driver, _LAUNCHED.get(driver, ""), False, exc) from None


def out_of_memory(driver, exc: CudaError) -> ResourceLimitError:
    asked = f"asked for {_bytes(exc.nbytes)}" if exc.nbytes is not None else "failed"
    free = free_memory(driver)
    have = f"{_bytes(free[0])} free of {_bytes(free[1])}" if free else "free memory unknown"
    return ResourceLimitError(
        error(f"out of GPU memory: an allocation {asked}; {have} on GPU "
              f"{getattr(driver, 'device', 0)} ({exc})", ""),
        "free other programs' device memory (exe.function.close()), use a smaller batch, "
        "or pick another GPU (device=); this executable can be called again")


def free_memory(driver) -> tuple[int, int] | None:
    """``(free, total)`` bytes of the driver's GPU (cuMemGetInfo), or None."""
    try:
        return driver.mem_info()
    except (AttributeError, CudaError):
        return None


def _fault(driver, last_kernel: str, in_graph: bool, exc: CudaError) -> KernelFault:
    kernel = last_kernel or "(none launched yet)"
    graph = " (replayed in a CUDA graph: XLAC_CUDA_GRAPHS=0 CUDA_LAUNCH_BLOCKING=1 " \
            "names the kernel that faults)" if in_graph else \
            " (launches are asynchronous: CUDA_LAUNCH_BLOCKING=1 names the kernel that faults)"
    name = STICKY[exc.status]
    with _LOST_LOCK:
        _LOST.setdefault(driver, f"the GPU context is lost: a kernel faulted earlier in this "
                         f"process ({name}, kernel {kernel}); restart the process to use GPU "
                         f"{getattr(driver, 'device', 0)} again")
    return KernelFault(f"a kernel faulted on the GPU: {name}; the kernel launched last: "
                       f"{kernel}{graph}. The GPU context is lost: later calls on this GPU "
                       f"fail until the process restarts ({exc})", exc.status)


def context_lost(driver) -> str | None:
    """Why ``driver``'s context is lost, or None while it is usable."""
    return _LOST.get(driver)


def _bytes(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count} bytes ({count / size:.1f} {unit})"
    return f"{count} bytes"
