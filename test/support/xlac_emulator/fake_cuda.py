"""A stand-in for the CUDA driver, for testing the launch path without a GPU.

Device memory is host memory (numpy buffers). Launches are recorded; with
``execute=True`` they also run, through the SIMT emulator
(``xlac_emulator.simt``), on the kernels' MLIR text given as ``kernels=`` or
``attach_kernels``. Every pointer argument must be a live device allocation,
as on a GPU, where a host pointer would fault. Pinned host memory
(``alloc_host``) is host memory too; each copy into it is a read-back,
counted in ``read_backs`` (host control flow reading a predicate).

Faults a GPU has can be asked for: ``memory_bytes`` bounds the device memory
(an allocation past it fails with CUDA_ERROR_OUT_OF_MEMORY, as cuMemAlloc's;
``mem_info`` says what is free), and a launch of a kernel in
``faulting_kernels`` faults with CUDA_ERROR_ILLEGAL_ADDRESS: seen at the next
synchronization, and sticky from then on, as on a GPU.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from xlac.targets.cuda.runtime import CudaError

OUT_OF_MEMORY, ILLEGAL_ADDRESS = 2, 700


class FakeDriver:
    def __init__(self, execute: bool = False, kernels: str = "", memory_bytes: int | None = None,
                 faulting_kernels: tuple[str, ...] = ()):
        self.memory: dict[int, np.ndarray] = {}
        self.launches: list[tuple[str, tuple, tuple, list[int]]] = []
        self.modules: list[str] = []
        self.freed = 0
        self.pinned: dict[int, np.ndarray] = {}
        self.read_backs = 0
        self.execute = execute
        self.emulator = None
        self.memory_bytes, self.faulting_kernels = memory_bytes, faulting_kernels
        self.sticky: int | None = None          # the fault every call reports, once one happened
        self.current_threads: set[int] = set()  # the threads that made the context current
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

    def load_module(self, ptx: str) -> int:
        self.modules.append(ptx)
        return len(self.modules)

    def function(self, module: int, name: str) -> int:
        if f".entry {name}(" not in self.modules[module - 1]:
            raise CudaError(f"CUDA driver: cuModuleGetFunction failed: no entry {name}")
        return name

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

    def free(self, pointer: int) -> None:
        del self.memory[pointer]
        self.freed += 1

    def alloc_host(self, nbytes: int) -> int:
        buffer = np.zeros(max(nbytes, 1), np.uint8)
        self.pinned[buffer.ctypes.data] = buffer
        return buffer.ctypes.data

    def free_host(self, pointer: int) -> None:
        del self.pinned[pointer]

    def to_device(self, pointer: int, host: int, nbytes: int) -> None:
        ctypes.memmove(self._check(pointer, nbytes), host, nbytes)

    def to_host(self, host: int, pointer: int, nbytes: int) -> None:
        ctypes.memmove(host, self._check(pointer, nbytes), nbytes)

    def copy(self, target: int, source: int, nbytes: int) -> None:
        ctypes.memmove(self._check(target, nbytes), self._check(source, nbytes), nbytes)

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
        self._enqueue(lambda: self._run(function, tuple(grid), tuple(block), smem, words, values))

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
    def create_stream(self) -> int:
        self.streams = getattr(self, "streams", 0) + 1
        return self.streams

    def destroy_stream(self, stream: int) -> None:
        pass

    def to_device_async(self, pointer: int, host: int, nbytes: int, stream: int) -> None:
        self._fault_if_sticky("cuMemcpyHtoDAsync_v2")
        self._check(pointer, nbytes)
        self._enqueue(lambda: self.to_device(pointer, host, nbytes))

    def to_host_async(self, host: int, pointer: int, nbytes: int, stream: int) -> None:
        if host in self.pinned:                        # a read-back: one element, maybe inside a buffer
            if getattr(self, "_captured", None) is not None:
                raise CudaError("CUDA driver: a read-back while a graph is captured")
            self._inside(pointer, nbytes)
            self.read_backs += 1
            self._enqueue(lambda: ctypes.memmove(host, pointer, nbytes))
            return
        self._check(pointer, nbytes)
        self._enqueue(lambda: self.to_host(host, pointer, nbytes))

    def copy_async(self, target: int, source: int, nbytes: int, stream: int) -> None:
        self._check(target, nbytes), self._check(source, nbytes)
        self._enqueue(lambda: self.copy(target, source, nbytes))

    def memset_async(self, pointer: int, value: int, nbytes: int, stream: int) -> None:
        self._check(pointer, nbytes)
        self._enqueue(lambda: ctypes.memset(pointer, value, nbytes))

    def stream_synchronize(self, stream: int) -> None:
        self._fault_if_sticky("cuStreamSynchronize")

    def begin_capture(self, stream: int) -> None:
        self._captured = []

    def end_capture(self, stream: int) -> int:
        work, self._captured = self._captured, None
        self.graphs = getattr(self, "graphs", []) + [work]
        return len(self.graphs)

    def launch_graph(self, graph: int, stream: int) -> None:
        for work in self.graphs[graph - 1]:
            work()

    def destroy_graph(self, graph: int) -> None:
        pass

    def _enqueue(self, work) -> None:
        if getattr(self, "_captured", None) is not None:
            self._captured.append(work)
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
