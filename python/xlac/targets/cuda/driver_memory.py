"""The driver calls that arrays on the device need (``xlac.targets.cuda.memory``):
the stream-ordered pool, events (timing ones for ``exe.profile()`` too), and asking the driver where a pointer points.
``CtypesDriver`` has them; a stand-in driver (tests) writes its own.
"""

from __future__ import annotations

import ctypes

from xlac.targets.cuda.errors import CudaError

_MEMPOOL_RELEASE_THRESHOLD = 4            # CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
_EVENT_DEFAULT = 0                        # an event that keeps the time it completed at
_EVENT_DISABLE_TIMING = 2                 # an event for ordering only: cheaper to record
_NOT_READY = 600                          # CUDA_ERROR_NOT_READY (cuEventQuery)
_POINTER_DEVICE_ORDINAL = 9               # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
_POINTER_MEMORY_TYPE, _MEMORY_TYPE_DEVICE = 2, 2      # CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_MEMORYTYPE_DEVICE


class StreamOrderedCalls:
    """For a class with ``check(name, *args)``, ``_lib`` (libcuda) and ``_device``."""

    def use_default_pool(self, release_threshold: int) -> None:
        """Allocations (``alloc_async``) from the device's default pool, which keeps up to
        ``release_threshold`` freed bytes instead of returning them at each synchronization."""
        pool, value = ctypes.c_void_p(), ctypes.c_uint64(release_threshold)
        self.check("cuDeviceGetDefaultMemPool", ctypes.byref(pool), self._device)
        self.check("cuMemPoolSetAttribute", pool, ctypes.c_int(_MEMPOOL_RELEASE_THRESHOLD),
                   ctypes.byref(value))

    def alloc_async(self, nbytes: int, stream: int) -> int:
        pointer = ctypes.c_uint64()
        self.check("cuMemAllocAsync", ctypes.byref(pointer), ctypes.c_size_t(max(nbytes, 1)),
                   ctypes.c_void_p(stream), nbytes=nbytes)      # out of memory names the bytes
        return pointer.value

    def free_async(self, pointer: int, stream: int) -> None:
        self.check("cuMemFreeAsync", ctypes.c_uint64(pointer), ctypes.c_void_p(stream))

    def create_event(self) -> int:
        event = ctypes.c_void_p()
        self.check("cuEventCreate", ctypes.byref(event), ctypes.c_uint(_EVENT_DISABLE_TIMING))
        return event.value

    def create_timing_event(self) -> int:
        """An event ``event_elapsed_ms`` can read (exe.profile(): one before and after each launch)."""
        event = ctypes.c_void_p()
        self.check("cuEventCreate", ctypes.byref(event), ctypes.c_uint(_EVENT_DEFAULT))
        return event.value

    def event_elapsed_ms(self, start: int, end: int) -> float:
        """Milliseconds between two completed timing events (about 0.5 us resolution)."""
        elapsed = ctypes.c_float()
        self.check("cuEventElapsedTime", ctypes.byref(elapsed), ctypes.c_void_p(start),
                   ctypes.c_void_p(end))
        return elapsed.value

    def record_event(self, event: int, stream: int) -> None:
        self.check("cuEventRecord", ctypes.c_void_p(event), ctypes.c_void_p(stream))

    def wait_event(self, stream: int, event: int) -> None:
        self.check("cuStreamWaitEvent", ctypes.c_void_p(stream), ctypes.c_void_p(event), ctypes.c_uint(0))

    def event_synchronize(self, event: int) -> None:
        self.check("cuEventSynchronize", ctypes.c_void_p(event))

    def event_done(self, event: int) -> bool:
        status = self._lib.cuEventQuery(ctypes.c_void_p(event))
        if status not in (0, _NOT_READY):
            raise CudaError(f"CUDA driver: cuEventQuery failed: {self._error_text(status)}")
        return status == 0

    def destroy_event(self, event: int) -> None:
        self.check("cuEventDestroy_v2", ctypes.c_void_p(event))

    def pointer_device(self, pointer: int) -> int | None:
        """The ordinal of the GPU whose memory ``pointer`` is in; None for host memory
        (pageable, or pinned: a kernel could read it, at PCIe speed)."""
        kind, ordinal = ctypes.c_uint(), ctypes.c_int()
        for attribute, value in ((_POINTER_MEMORY_TYPE, kind), (_POINTER_DEVICE_ORDINAL, ordinal)):
            if self._lib.cuPointerGetAttribute(ctypes.byref(value), ctypes.c_int(attribute),
                                               ctypes.c_uint64(pointer)) != 0:
                return None
        return ordinal.value if kind.value == _MEMORY_TYPE_DEVICE else None
