"""A stand-in for the CUDA driver, for testing the launch path without a GPU.

Device memory is host memory (numpy buffers). Launches are recorded, not
run; every pointer argument must be a live device allocation, as on a GPU,
where a host pointer would fault.
"""

from __future__ import annotations

import ctypes

import numpy as np

from xlac.runtime.cuda import CudaError


class FakeDriver:
    def __init__(self):
        self.memory: dict[int, np.ndarray] = {}
        self.launches: list[tuple[str, tuple, tuple, list[int]]] = []
        self.modules: list[str] = []
        self.freed = 0

    def load_module(self, ptx: str) -> int:
        self.modules.append(ptx)
        return len(self.modules)

    def function(self, module: int, name: str) -> int:
        if f".entry {name}(" not in self.modules[module - 1]:
            raise CudaError(f"CUDA driver: cuModuleGetFunction failed: no entry {name}")
        return name

    def alloc(self, nbytes: int) -> int:
        buffer = np.zeros(max(nbytes, 1), np.uint8)
        self.memory[buffer.ctypes.data] = buffer
        return buffer.ctypes.data

    def free(self, pointer: int) -> None:
        del self.memory[pointer]
        self.freed += 1

    def to_device(self, pointer: int, host: int, nbytes: int) -> None:
        ctypes.memmove(self._check(pointer, nbytes), host, nbytes)

    def to_host(self, host: int, pointer: int, nbytes: int) -> None:
        ctypes.memmove(host, self._check(pointer, nbytes), nbytes)

    def copy(self, target: int, source: int, nbytes: int) -> None:
        ctypes.memmove(self._check(target, nbytes), self._check(source, nbytes), nbytes)

    def launch(self, function, grid, block, smem, params) -> None:
        words = [ctypes.c_uint64.from_address(params[i]).value for i in range(len(params))]
        self.launches.append((function, tuple(grid), tuple(block), words))

    def synchronize(self) -> None:
        pass

    def is_device_pointer(self, pointer: int) -> bool:
        return pointer in self.memory

    def _check(self, pointer: int, nbytes: int) -> int:
        if pointer not in self.memory or self.memory[pointer].size < nbytes:
            raise CudaError(f"CUDA driver: {pointer:#x} is not a device allocation of {nbytes} bytes")
        return pointer
