"""Running a CUDA program: the driver API through ctypes, and the host schedule.

No CUDA package is needed at run time: ``libcuda.so.1`` comes with the
NVIDIA driver. ``CudaFunction`` has the CPU function's interface (called
with host pointers of the inputs, then the outputs), so ``Executable`` is
the same for both targets. Each call copies the inputs to the device,
runs the schedule's steps on one stream, copies the outputs back and frees
every device buffer it allocated.
"""

from __future__ import annotations

import ctypes

from xlac.cuda_schedule import Alloc, Const, Copy, Launch, View
from xlac.errors import XlacError

_JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 5, 6
_SCALARS = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
            "i64": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double}


class CudaUnavailable(XlacError):
    """No usable CUDA driver or GPU on this machine."""


class CudaError(XlacError):
    """A CUDA driver call failed."""


class CtypesDriver:
    """The libcuda calls xlac uses; every error becomes CudaError with its name."""

    def __init__(self, library: str = "libcuda.so.1"):
        try:
            self._lib = ctypes.CDLL(library)
        except OSError as exc:
            raise CudaUnavailable(f"no CUDA driver: cannot load {library} ({exc}); "
                                  "target='cuda' compiles here but runs only on a machine with "
                                  "an NVIDIA GPU and its driver") from None
        self.check("cuInit", ctypes.c_uint(0))
        device, self._context = ctypes.c_int(), ctypes.c_void_p()
        self.check("cuDeviceGet", ctypes.byref(device), ctypes.c_int(0))
        self.check("cuDevicePrimaryCtxRetain", ctypes.byref(self._context), device)
        self.check("cuCtxSetCurrent", self._context)

    def check(self, name: str, *args) -> None:
        status = getattr(self._lib, name)(*args)
        if status != 0:
            error = CudaUnavailable if name in ("cuInit", "cuDeviceGet") else CudaError
            raise error(f"CUDA driver: {name} failed: {self._error_text(status)}")

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
            raise CudaError(f"{exc}; JIT log: {log.value.decode(errors='replace')}") from None
        return module.value

    def function(self, module: int, name: str) -> int:
        handle = ctypes.c_void_p()
        self.check("cuModuleGetFunction", ctypes.byref(handle), ctypes.c_void_p(module), name.encode())
        return handle.value

    def alloc(self, nbytes: int) -> int:
        pointer = ctypes.c_uint64()
        self.check("cuMemAlloc_v2", ctypes.byref(pointer), ctypes.c_size_t(max(nbytes, 1)))
        return pointer.value

    def free(self, pointer: int) -> None:
        self.check("cuMemFree_v2", ctypes.c_uint64(pointer))

    def to_device(self, pointer: int, host: int, nbytes: int) -> None:
        self.check("cuMemcpyHtoD_v2", ctypes.c_uint64(pointer), ctypes.c_void_p(host), ctypes.c_size_t(nbytes))

    def to_host(self, host: int, pointer: int, nbytes: int) -> None:
        self.check("cuMemcpyDtoH_v2", ctypes.c_void_p(host), ctypes.c_uint64(pointer), ctypes.c_size_t(nbytes))

    def copy(self, target: int, source: int, nbytes: int) -> None:
        self.check("cuMemcpyDtoD_v2", ctypes.c_uint64(target), ctypes.c_uint64(source), ctypes.c_size_t(nbytes))

    def launch(self, function: int, grid, block, smem: int, params) -> None:
        self.check("cuLaunchKernel", ctypes.c_void_p(function), *[ctypes.c_uint(d) for d in grid],
                   *[ctypes.c_uint(d) for d in block], ctypes.c_uint(smem), None, params, None)

    def synchronize(self) -> None:
        self.check("cuCtxSynchronize")


_DRIVER = None


def open_driver():
    """The process's driver, opened once (CudaUnavailable if there is none)."""
    global _DRIVER
    if _DRIVER is None:
        _DRIVER = CtypesDriver()
    return _DRIVER


class CudaFunction:
    """A compiled program: its PTX and host schedule; call with host pointers."""

    def __init__(self, ptx: str, steps: list, input_bytes: list[int], output_bytes: list[int],
                 driver=None, kernels: str = ""):
        self.ptx = ptx
        self.kernels = kernels            # the kernels as gpu.func (MLIR text), for the emulator
        self.steps = steps
        self._sizes = input_bytes + output_bytes
        self._inputs = len(input_bytes)
        self._driver = driver
        self._functions: dict[str, int] | None = None

    def __call__(self, pointers: list[int]) -> None:
        driver = self._driver or open_driver()
        self._driver = driver
        functions = self._load(driver)
        buffers, owned = {}, []
        try:
            for index, (host, nbytes) in enumerate(zip(pointers, self._sizes)):
                buffers[f"arg{index}"] = device = driver.alloc(nbytes)
                owned.append(device)
                if index < self._inputs:
                    driver.to_device(device, host, nbytes)
            for step in self.steps:
                self._execute(driver, functions, step, buffers, owned)
            driver.synchronize()
            for index in range(self._inputs, len(pointers)):
                driver.to_host(pointers[index], buffers[f"arg{index}"], self._sizes[index])
        finally:
            for device in owned:
                driver.free(device)

    def _load(self, driver) -> dict[str, int]:
        if self._functions is None:
            module = driver.load_module(self.ptx)
            kernels = {s.kernel for s in self.steps if isinstance(s, Launch)}
            self._functions = {name: driver.function(module, name) for name in sorted(kernels)}
        return self._functions

    @staticmethod
    def _execute(driver, functions, step, buffers, owned) -> None:
        if isinstance(step, Alloc):
            buffers[step.value] = driver.alloc(step.nbytes)
            owned.append(buffers[step.value])
        elif isinstance(step, Const):
            buffers[step.value] = driver.alloc(len(step.data))
            owned.append(buffers[step.value])
            host = ctypes.create_string_buffer(step.data, len(step.data))
            driver.to_device(buffers[step.value], ctypes.addressof(host), len(step.data))
        elif isinstance(step, View):
            buffers[step.value] = buffers[step.source]     # the kernel applies the view's offset
        elif isinstance(step, Copy):
            driver.copy(buffers[step.target], buffers[step.source], step.nbytes)
        else:
            values = [ctypes.c_uint64(buffers[value]) if kind == "buf" else _SCALARS[kind](value)
                      for kind, value in step.args]
            params = (ctypes.c_void_p * max(1, len(values)))(
                *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
            driver.launch(functions[step.kernel], step.grid, step.block, step.smem, params)
