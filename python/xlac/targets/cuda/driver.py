"""The CUDA driver API through ctypes (``libcuda.so.1``, which comes with the
NVIDIA driver: no CUDA package is needed at run time), one driver per GPU
and process."""

from __future__ import annotations

import ctypes
import threading

from xlac.targets.cuda.driver_memory import StreamOrderedCalls
from xlac.targets.cuda.errors import CudaError, CudaUnavailable

_JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 5, 6
_STREAM_NON_BLOCKING = 1                 # no implicit synchronization with the legacy stream
_CAPTURE_THREAD_LOCAL = 1


class CtypesDriver(StreamOrderedCalls):
    """The libcuda calls xlac uses; every error becomes CudaError with its name."""

    def __init__(self, library: str = "libcuda.so.1", device: int = 0, exact: bool = False):
        try:
            self._lib = ctypes.CDLL(library)
        except OSError as exc:
            raise CudaUnavailable(f"no CUDA driver: cannot load {library} ({exc}); "
                                  "target='cuda' compiles here but runs only on a machine with "
                                  "an NVIDIA GPU and its driver") from None
        self.check("cuInit", ctypes.c_uint(0))
        handle, self._context, count = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_int()
        self.check("cuDeviceGetCount", ctypes.byref(count))
        if exact and not 0 <= device < count.value:
            raise CudaUnavailable(f"device={device} asked for, but this machine has "
                                  f"{count.value} GPU(s): device= takes 0 to {count.value - 1}")
        # the MPI ranks of a host take one GPU each (device = local rank, wrapped)
        self.device = self.ordinal = device if exact else device % max(count.value, 1)
        self.check("cuDeviceGet", ctypes.byref(handle), ctypes.c_int(self.device))
        self._device = handle
        self.check("cuDevicePrimaryCtxRetain", ctypes.byref(self._context), handle)
        self._current = threading.local()      # the context is current per thread
        self.make_current()

    def make_current(self) -> None:
        """Make this GPU's context the calling thread's (once per thread): a thread
        that never did has none, and its first driver call would fail."""
        if getattr(self._current, "context", None) != self._context.value:
            self.check("cuCtxSetCurrent", self._context)
            self._current.context = self._context.value

    def mem_info(self) -> tuple[int, int]:
        """``(free, total)`` bytes of device memory."""
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self.check("cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        return free.value, total.value

    def check(self, name: str, *args, nbytes: int | None = None) -> None:
        status = getattr(self._lib, name)(*args)
        if status != 0:
            message = f"CUDA driver: {name} failed: {self._error_text(status)}"
            if name in ("cuInit", "cuDeviceGet", "cuDeviceGetCount"):
                raise CudaUnavailable(message)
            raise CudaError(message, status, nbytes)    # xlac.targets.cuda.faults reads status

    def _error_text(self, status: int) -> str:
        text = ctypes.c_char_p()
        if self._lib.cuGetErrorName(status, ctypes.byref(text)) == 0 and text.value:
            return f"{text.value.decode()} ({status})"
        return f"error {status}"

    def load_module(self, ptx: str) -> int:
        log = ctypes.create_string_buffer(16384)
        options = (ctypes.c_int * 2)(_JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p).value, len(log))
        module = ctypes.c_void_p()
        try:
            self.check("cuModuleLoadDataEx", ctypes.byref(module), ctypes.c_char_p(ptx.encode() + b"\0"),
                       ctypes.c_uint(2), options, values)
        except CudaError as exc:
            raise CudaError(f"{exc}; JIT log: {log.value.decode(errors='replace')}", exc.status) from None
        return module.value

    def function(self, module: int, name: str) -> int:
        handle = ctypes.c_void_p()
        self.check("cuModuleGetFunction", ctypes.byref(handle), ctypes.c_void_p(module), name.encode())
        return handle.value

    def alloc(self, nbytes: int) -> int:
        pointer = ctypes.c_uint64()
        self.check("cuMemAlloc_v2", ctypes.byref(pointer), ctypes.c_size_t(max(nbytes, 1)), nbytes=nbytes)
        return pointer.value

    def free(self, pointer: int) -> None:
        self.check("cuMemFree_v2", ctypes.c_uint64(pointer))

    def alloc_host(self, nbytes: int) -> int:
        """Pinned (page-locked) host memory: what a read-back is copied into."""
        pointer = ctypes.c_void_p()
        self.check("cuMemAllocHost_v2", ctypes.byref(pointer), ctypes.c_size_t(nbytes), nbytes=nbytes)
        return pointer.value

    def free_host(self, pointer: int) -> None:
        self.check("cuMemFreeHost", ctypes.c_void_p(pointer))

    def to_device(self, pointer: int, host: int, nbytes: int) -> None:
        self.check("cuMemcpyHtoD_v2", ctypes.c_uint64(pointer), ctypes.c_void_p(host), ctypes.c_size_t(nbytes))

    def to_host(self, host: int, pointer: int, nbytes: int) -> None:
        self.check("cuMemcpyDtoH_v2", ctypes.c_void_p(host), ctypes.c_uint64(pointer), ctypes.c_size_t(nbytes))

    def create_stream(self) -> int:
        stream = ctypes.c_void_p()
        self.check("cuStreamCreate", ctypes.byref(stream), ctypes.c_uint(_STREAM_NON_BLOCKING))
        return stream.value

    def destroy_stream(self, stream: int) -> None:
        self.check("cuStreamDestroy_v2", ctypes.c_void_p(stream))

    def to_device_async(self, pointer: int, host: int, nbytes: int, stream: int) -> None:
        self.check("cuMemcpyHtoDAsync_v2", ctypes.c_uint64(pointer), ctypes.c_void_p(host),
                   ctypes.c_size_t(nbytes), ctypes.c_void_p(stream))

    def to_host_async(self, host: int, pointer: int, nbytes: int, stream: int) -> None:
        self.check("cuMemcpyDtoHAsync_v2", ctypes.c_void_p(host), ctypes.c_uint64(pointer),
                   ctypes.c_size_t(nbytes), ctypes.c_void_p(stream))

    def copy_async(self, target: int, source: int, nbytes: int, stream: int) -> None:
        self.check("cuMemcpyDtoDAsync_v2", ctypes.c_uint64(target), ctypes.c_uint64(source),
                   ctypes.c_size_t(nbytes), ctypes.c_void_p(stream))

    def launch(self, function: int, grid, block, smem: int, params, stream: int) -> None:
        self.check("cuLaunchKernel", ctypes.c_void_p(function), *[ctypes.c_uint(d) for d in grid],
                   *[ctypes.c_uint(d) for d in block], ctypes.c_uint(smem), ctypes.c_void_p(stream),
                   params, None)

    def memset_async(self, pointer: int, value: int, nbytes: int, stream: int) -> None:
        self.check("cuMemsetD8Async", ctypes.c_uint64(pointer), ctypes.c_ubyte(value),
                   ctypes.c_size_t(nbytes), ctypes.c_void_p(stream))

    def stream_synchronize(self, stream: int) -> None:
        self.check("cuStreamSynchronize", ctypes.c_void_p(stream))

    def begin_capture(self, stream: int) -> None:
        self.check("cuStreamBeginCapture_v2", ctypes.c_void_p(stream), ctypes.c_int(_CAPTURE_THREAD_LOCAL))

    def end_capture(self, stream: int) -> int:
        """The captured work as an executable graph."""
        graph, executable = ctypes.c_void_p(), ctypes.c_void_p()
        self.check("cuStreamEndCapture", ctypes.c_void_p(stream), ctypes.byref(graph))
        try:
            self.check("cuGraphInstantiateWithFlags", ctypes.byref(executable), graph, ctypes.c_ulonglong(0))
        finally:
            self.check("cuGraphDestroy", graph)
        return executable.value

    def launch_graph(self, graph: int, stream: int) -> None:
        self.check("cuGraphLaunch", ctypes.c_void_p(graph), ctypes.c_void_p(stream))

    def destroy_graph(self, graph: int) -> None:
        self.check("cuGraphExecDestroy", ctypes.c_void_p(graph))


_DRIVERS: dict[tuple[int, bool], CtypesDriver] = {}
_DRIVERS_LOCK = threading.Lock()         # threads calling their first programs at once: one driver


def open_driver(device: int = 0, exact: bool = False):
    """The process's driver on GPU ``device``, opened once (CudaUnavailable if there
    is none); ``exact``: that GPU or an error (``device=``), else the local rank's, wrapped."""
    with _DRIVERS_LOCK:
        if (device, exact) not in _DRIVERS:
            # a GPU named exactly that one already runs on: its driver (one per GPU,
            # or arrays put on "cuda:0" would not be the executables' own)
            same = [d for d in _DRIVERS.values() if exact and _ordinal(d) == device]
            _DRIVERS[device, exact] = same[0] if same else CtypesDriver(device=device, exact=exact)
        return _DRIVERS[device, exact]


def _ordinal(driver) -> int:
    return getattr(driver, "device", getattr(driver, "ordinal", 0))
