"""A stand-in for the CUDA driver, for testing the launch path without a GPU.

Device memory is host memory (numpy buffers). Launches are recorded; with
``execute=True`` they also run, through the SIMT emulator
(``xlac_emulator.simt``), on the kernels' MLIR text given as ``kernels=`` or
``attach_kernels``. Every pointer argument must be a live device allocation,
as on a GPU, where a host pointer would fault. Pinned host memory
(``alloc_host``) is host memory too; a copy into a pinned slot of one scalar
(8 bytes: host control flow's) is a read-back, counted in ``read_backs``; copies
in and out of larger pinned buffers are staged transfers.

Every entry point called is counted in ``calls`` (name -> count), as a profiler
would see them: tests assert which driver calls a program's call makes (no
``alloc``/``free`` per call, no host<->device copy with device-resident inputs).

Streams, events and the stream-ordered pool: with ``deferred=True`` the work
enqueued on a stream waits until something waits for it (a stream or event
synchronize, or another stream's work behind ``wait_event``), so a test sees
that a call returned before its work ran; without it work runs as it arrives.
``alloc_async`` reuses what ``free_async`` gave back on the same stream (a pool
with a release threshold keeps freed memory); ``pool_grows`` counts new memory.

Timing events (``create_timing_event``, ``event_elapsed_ms``) read a fake GPU
clock per stream that each piece of enqueued work advances by a fixed amount:
a launch by ``LAUNCH_MS_PER_BLOCK`` per block of its grid, a copy by
``COPY_MS_PER_BYTE`` per byte, so that a profile's times are known in advance.

Faults a GPU has can be asked for: ``memory_bytes`` bounds the device memory
(an allocation past it fails with CUDA_ERROR_OUT_OF_MEMORY, as cuMemAlloc's;
``mem_info`` says what is free), and a launch of a kernel in
``faulting_kernels`` faults with CUDA_ERROR_ILLEGAL_ADDRESS: seen at the next
synchronization, and sticky from then on, as on a GPU.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections import Counter, defaultdict

import numpy as np

from xlac.targets.cuda.runtime import CudaError

_READ_BACK_SLOT = 8                 # HostControl's pinned scalar
_FIRST_STREAM = 0x1000              # above CU_STREAM_LEGACY (1) and CU_STREAM_PER_THREAD (2)
OUT_OF_MEMORY, ILLEGAL_ADDRESS = 2, 700
LAUNCH_MS_PER_BLOCK = 0.001         # the fake GPU clock: 1 us per block of a launch's grid
COPY_MS_PER_BYTE = 1e-6             # and 1 ns per byte copied


def _counted(method):
    @functools.wraps(method)
    def counting(self, *args, **kwargs):
        self.calls[method.__name__] += 1
        return method(self, *args, **kwargs)
    return counting


class FakeDriver:
    ordinal = 0

    def __init__(self, execute: bool = False, kernels: str = "", deferred: bool = False,
                 memory_bytes: int | None = None, faulting_kernels: tuple[str, ...] = ()):
        self.memory: dict[int, np.ndarray] = {}
        self.launches: list[tuple[str, tuple, tuple, list[int]]] = []
        self.modules: list[str] = []
        self.freed = 0
        self.pinned: dict[int, np.ndarray] = {}
        self.read_backs = 0
        self.execute = execute
        self.emulator = None
        self.calls: Counter = Counter()
        self.deferred = deferred
        self.queues: dict[int, list] = defaultdict(list)      # stream -> work not run yet
        self.enqueued: Counter = Counter()                   # stream -> work ever enqueued
        self.done: Counter = Counter()                       # stream -> work run
        self.events: dict[int, tuple[int, int] | None] = {}  # event -> (stream, position)
        self.pool: dict[tuple[int, int], list[np.ndarray]] = defaultdict(list)
        self.pool_grows = 0
        self._generation: Counter = Counter()                # pointer -> times handed out
        self.default_pool_threshold = None
        self.memory_bytes, self.faulting_kernels = memory_bytes, faulting_kernels
        self.sticky: int | None = None          # the fault every call reports, once one happened
        self.current_threads: set[int] = set()  # the threads that made the context current
        self.clock_ms: Counter = Counter()      # stream -> its fake GPU time after the work enqueued
        self.event_times: dict[int, float] = {}  # timing event -> its stream's clock when recorded
        if kernels:
            self.attach_kernels(kernels)

    def make_current(self) -> None:
        self.current_threads.add(threading.get_ident())

    def mem_info(self) -> tuple[int, int]:
        used = sum(buffer.size for buffer in self.memory.values())
        total = self.memory_bytes if self.memory_bytes is not None else 1 << 40
        return total - used, total

    def _fault_if_sticky(self, call: str) -> None:
        if self.sticky is not None:
            raise CudaError(f"CUDA driver: {call} failed: CUDA_ERROR_ILLEGAL_ADDRESS ({self.sticky})",
                            self.sticky)

    def attach_kernels(self, kernels: str) -> None:
        """The kernels (CudaFunction.kernels) that launches run when ``execute`` is set."""
        from xlac_emulator.simt import Emulator
        self.emulator = Emulator(kernels)

    @_counted
    def load_module(self, ptx: str) -> int:
        self.modules.append(ptx)
        return len(self.modules)

    @_counted
    def function(self, module: int, name: str) -> int:
        if f".entry {name}(" not in self.modules[module - 1]:
            raise CudaError(f"CUDA driver: cuModuleGetFunction failed: no entry {name}")
        return name

    @_counted
    def alloc(self, nbytes: int) -> int:
        self._fault_if_sticky("cuMemAlloc_v2")
        if self.memory_bytes is not None and max(nbytes, 1) > self.mem_info()[0]:
            raise CudaError("CUDA driver: cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2)",
                            OUT_OF_MEMORY, nbytes)
        # executing: fresh memory is garbage (0xFF: NaN), as cuMemAlloc's, so a kernel that
        # reads what it never wrote shows; recording: zeros, which existing tests expect
        buffer = np.full(max(nbytes, 1), 0xFF if self.execute else 0, np.uint8)
        self.memory[buffer.ctypes.data] = buffer
        return buffer.ctypes.data

    @_counted
    def free(self, pointer: int) -> None:
        del self.memory[pointer]
        self.freed += 1

    @_counted
    def alloc_host(self, nbytes: int) -> int:
        buffer = np.zeros(max(nbytes, 1), np.uint8)
        self.pinned[buffer.ctypes.data] = buffer
        return buffer.ctypes.data

    @_counted
    def free_host(self, pointer: int) -> None:
        del self.pinned[pointer]

    @_counted
    def to_device(self, pointer: int, host: int, nbytes: int) -> None:
        ctypes.memmove(self._check(pointer, nbytes), host, nbytes)

    @_counted
    def to_host(self, host: int, pointer: int, nbytes: int) -> None:
        ctypes.memmove(host, self._check(pointer, nbytes), nbytes)

    def copy(self, target: int, source: int, nbytes: int) -> None:
        ctypes.memmove(self._check(target, nbytes), self._check(source, nbytes), nbytes)

    @_counted
    def launch(self, function, grid, block, smem, params, stream=None) -> None:
        self._fault_if_sticky("cuLaunchKernel")
        # the parameters are read now, as cuLaunchKernel (and graph capture) copies them
        words = [ctypes.c_uint64.from_address(params[i]).value for i in range(len(params))]
        values = None
        if self.execute:
            if self.emulator is None:
                raise CudaError("FakeDriver(execute=True) has no kernels: "
                                "pass kernels= or call attach_kernels")
            values = self.emulator.read_params(function, params)
        self._enqueue(lambda: self._run(function, tuple(grid), tuple(block), smem, words, values),
                      stream, LAUNCH_MS_PER_BLOCK * int(np.prod(grid)))

    def _run(self, function, grid, block, smem, words, values) -> None:
        self.launches.append((function, grid, block, words))
        if function in self.faulting_kernels:
            self.sticky = ILLEGAL_ADDRESS          # the kernel faults; the next sync reports it
            return
        if values is not None:
            self.emulator.run(function, grid, block, values, self.memory, smem)

    def synchronize(self) -> None:
        pass

    # the stream API: work runs in order as it arrives, or is kept while a graph is captured
    @_counted
    def create_stream(self) -> int:
        self.streams = getattr(self, "streams", 0) + 1
        return _FIRST_STREAM + self.streams

    @_counted
    def destroy_stream(self, stream: int) -> None:
        pass

    @_counted
    def to_device_async(self, pointer: int, host: int, nbytes: int, stream: int) -> None:
        self._fault_if_sticky("cuMemcpyHtoDAsync_v2")
        self._check(pointer, nbytes)
        self._enqueue(lambda: ctypes.memmove(pointer, host, nbytes), stream)

    @_counted
    def to_host_async(self, host: int, pointer: int, nbytes: int, stream: int) -> None:
        if self.pinned.get(host, np.empty(_READ_BACK_SLOT + 1)).size <= _READ_BACK_SLOT:
            # a read-back: one element, maybe inside a buffer
            if getattr(self, "_captured", None) is not None:
                raise CudaError("CUDA driver: a read-back while a graph is captured")
            self._inside(pointer, nbytes)
            self.read_backs += 1
            self._enqueue(lambda: ctypes.memmove(host, pointer, nbytes), stream)
            return
        self._check(pointer, nbytes)
        self._enqueue(lambda: ctypes.memmove(host, pointer, nbytes), stream)

    @_counted
    def copy_async(self, target: int, source: int, nbytes: int, stream: int) -> None:
        self._inside(target, nbytes), self._inside(source, nbytes)     # a view's address, as cuMemcpy takes
        self._enqueue(lambda: ctypes.memmove(target, source, nbytes), stream, COPY_MS_PER_BYTE * nbytes)

    @_counted
    def memset_async(self, pointer: int, value: int, nbytes: int, stream: int) -> None:
        self._check(pointer, nbytes)
        self._enqueue(lambda: ctypes.memset(pointer, value, nbytes), stream, COPY_MS_PER_BYTE * nbytes)

    @_counted
    def stream_synchronize(self, stream: int) -> None:
        self._flush(stream, self.enqueued[stream])
        self._fault_if_sticky("cuStreamSynchronize")       # a kernel that ran faulted

    # the stream-ordered pool (cuMemAllocAsync on the device's default pool)
    @_counted
    def use_default_pool(self, release_threshold: int) -> None:
        self.default_pool_threshold = release_threshold

    @_counted
    def alloc_async(self, nbytes: int, stream: int) -> int:
        self._fault_if_sticky("cuMemAllocAsync")
        freed = self.pool[(stream, max(nbytes, 1))]
        if not freed and self.memory_bytes is not None and max(nbytes, 1) > self.mem_info()[0]:
            raise CudaError("CUDA driver: cuMemAllocAsync failed: CUDA_ERROR_OUT_OF_MEMORY (2)",
                            OUT_OF_MEMORY, nbytes)
        if freed:
            buffer = freed.pop()
        else:
            buffer = np.full(max(nbytes, 1), 0xFF if self.execute else 0, np.uint8)
            self.pool_grows += 1
        self.memory[buffer.ctypes.data] = buffer
        self._generation[buffer.ctypes.data] += 1
        return buffer.ctypes.data

    @_counted
    def free_async(self, pointer: int, stream: int) -> None:
        # freed in stream order: the work enqueued before still has it; the pool may hand
        # it to the next allocation on this stream at once (in stream order that comes after)
        if threading.get_ident() not in self.current_threads:       # as the driver refuses it
            raise CudaError("CUDA driver: cuMemFreeAsync failed: CUDA_ERROR_INVALID_CONTEXT (201)")
        buffer = self._check(pointer, 1) and self.memory[pointer]
        self.pool[(stream, buffer.size)].append(buffer)
        generation = self._generation[pointer]
        self._enqueue(lambda: self._retire(pointer, generation), stream)

    def _retire(self, pointer: int, generation: int) -> None:
        if self._generation[pointer] == generation:      # not handed out again since
            del self.memory[pointer]

    # events (cuEventRecord captures the work enqueued on a stream so far)
    @_counted
    def create_event(self) -> int:
        handle = len(self.events) + 1
        self.events[handle] = None
        return handle

    @_counted
    def create_timing_event(self) -> int:
        return self.create_event()

    @_counted
    def record_event(self, event: int, stream: int) -> None:
        self.events[event] = (stream, self.enqueued[stream])
        self.event_times[event] = self.clock_ms[stream]

    @_counted
    def event_elapsed_ms(self, start: int, end: int) -> float:
        for event in (start, end):
            if self.events.get(event) is None or not self.event_done(event):
                raise CudaError("CUDA driver: cuEventElapsedTime failed: CUDA_ERROR_NOT_READY (600)", 600)
        return self.event_times[end] - self.event_times[start]

    @_counted
    def wait_event(self, stream: int, event: int) -> None:
        recorded = self.events[event]
        if recorded is not None:
            self._enqueue(lambda: self._flush(*recorded), stream)

    @_counted
    def event_synchronize(self, event: int) -> None:
        if self.events[event] is not None:
            self._flush(*self.events[event])
        self._fault_if_sticky("cuEventSynchronize")        # a kernel that ran faulted

    @_counted
    def event_done(self, event: int) -> bool:
        recorded = self.events[event]
        return recorded is None or self.done[recorded[0]] >= recorded[1]

    @_counted
    def destroy_event(self, event: int) -> None:
        self.events[event] = None

    @_counted
    def pointer_device(self, pointer: int) -> int | None:
        inside = any(start <= pointer < start + buffer.size for start, buffer in self.memory.items())
        return self.ordinal if inside else None

    def _flush(self, stream: int, upto: int) -> None:
        """Run ``stream``'s work up to position ``upto`` (what an event recorded)."""
        queue = self.queues[stream]
        while self.done[stream] < upto and queue:
            work = queue.pop(0)
            self.done[stream] += 1
            work()

    @_counted
    def begin_capture(self, stream: int) -> None:
        self._captured = []

    @_counted
    def end_capture(self, stream: int) -> int:
        work, self._captured = self._captured, None
        self.graphs = getattr(self, "graphs", []) + [work]
        return len(self.graphs)

    @_counted
    def launch_graph(self, graph: int, stream: int) -> None:
        for work in self.graphs[graph - 1]:
            self._enqueue(work, stream)

    @_counted
    def destroy_graph(self, graph: int) -> None:
        pass

    def _enqueue(self, work, stream: int | None = None, fake_ms: float = 0.0) -> None:
        if stream is not None:
            self.clock_ms[stream] += fake_ms
        if getattr(self, "_captured", None) is not None:
            self._captured.append(work)
        elif self.deferred and stream is not None:
            self.queues[stream].append(work)
            self.enqueued[stream] += 1
        else:
            work()

    def is_device_pointer(self, pointer: int) -> bool:
        return pointer in self.memory

    def _check(self, pointer: int, nbytes: int) -> int:
        if pointer not in self.memory or self.memory[pointer].size < nbytes:
            raise CudaError(f"CUDA driver: {pointer:#x} is not a device allocation of {nbytes} bytes")
        return pointer

    def _inside(self, pointer: int, nbytes: int) -> None:
        if not any(start <= pointer and pointer + nbytes <= start + buffer.size
                   for start, buffer in self.memory.items()):
            raise CudaError(f"CUDA driver: {pointer:#x} is not {nbytes} bytes of a device allocation")
