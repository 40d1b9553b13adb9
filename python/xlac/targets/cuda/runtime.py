"""Running a CUDA program: the driver API through ctypes, and the host schedule.

No CUDA package is needed at run time: ``libcuda.so.1`` comes with the
NVIDIA driver. ``CudaFunction`` has the CPU function's interface (called
with host pointers of the inputs, then the outputs), so ``Executable`` is
the same for both targets. Device buffers and constants are set up on the
first call and reused; each call copies the inputs in, runs the schedule on
the function's stream (captured once as a CUDA graph, then launched whole;
``use_graphs=False``, XLAC_CUDA_GRAPHS=0, launches kernel by kernel) and copies the outputs back.
"""

from __future__ import annotations

import ctypes
import threading

from xlac.targets.cuda.control_flow import has_control_flow, walk_steps
from xlac.targets.cuda.control_runtime import HostControl
from xlac.targets.cuda.driver_memory import StreamOrderedCalls
from xlac.targets.cuda.errors import CudaError, CudaUnavailable
from xlac.targets.cuda.graphs import GraphCache
from xlac.targets.cuda.memory import ArgumentStaging
from xlac.targets.cuda.schedule import Alloc, Collective, Const, Copy, Launch, View
from xlac.targets.cuda.serialize import artifact_bytes, read_code

_JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 5, 6
_STREAM_NON_BLOCKING = 1                 # no implicit synchronization with the legacy stream
_CAPTURE_THREAD_LOCAL = 1
_SCALARS = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
            "i64": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double}


class CtypesDriver(StreamOrderedCalls):
    """The libcuda calls xlac uses; every error becomes CudaError with its name."""

    def __init__(self, library: str = "libcuda.so.1", device: int = 0):
        try:
            self._lib = ctypes.CDLL(library)
        except OSError as exc:
            raise CudaUnavailable(f"no CUDA driver: cannot load {library} ({exc}); "
                                  "target='cuda' compiles here but runs only on a machine with "
                                  "an NVIDIA GPU and its driver") from None
        self.check("cuInit", ctypes.c_uint(0))
        handle, self._context, count = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_int()
        self.check("cuDeviceGetCount", ctypes.byref(count))
        # one GPU per process: the MPI ranks of a host take one each (device = local rank)
        self.check("cuDeviceGet", ctypes.byref(handle), ctypes.c_int(device % max(count.value, 1)))
        self.ordinal, self._device = device % max(count.value, 1), handle
        device = handle
        self.check("cuDevicePrimaryCtxRetain", ctypes.byref(self._context), device)
        self.check("cuCtxSetCurrent", self._context)

    def check(self, name: str, *args) -> None:
        status = getattr(self._lib, name)(*args)
        if status != 0:
            error = CudaUnavailable if name in ("cuInit", "cuDeviceGet", "cuDeviceGetCount") else CudaError
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

    def alloc_host(self, nbytes: int) -> int:
        """Pinned (page-locked) host memory: what a read-back is copied into."""
        pointer = ctypes.c_void_p()
        self.check("cuMemAllocHost_v2", ctypes.byref(pointer), ctypes.c_size_t(nbytes))
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



_DRIVER = None


def open_driver(device: int = 0):
    """The process's driver on its GPU, opened once (CudaUnavailable if there is none)."""
    global _DRIVER
    if _DRIVER is None:
        _DRIVER = CtypesDriver(device=device)
    return _DRIVER


class CudaFunction:
    """A compiled program: its PTX and host schedule; call with host pointers.

    Device memory is set up on the first call and kept: the arguments' and
    temporaries' buffers (their sizes are static) and the constants, uploaded
    once. Each call then copies the inputs in, launches every kernel and
    copies the outputs back, all on the function's own stream, and waits for
    the stream once. ``close()`` (or garbage collection) frees it all.
    """

    def __init__(self, ptx: str, steps: list, input_bytes: list[int], output_bytes: list[int],
                 driver=None, kernels: str = "", gpu: str = "", use_graphs: bool = True,
                 grid=None, device: int = 0, nccl=None, donations: dict[int, int] | None = None):
        self.ptx = ptx
        self.kernels = kernels            # the kernels as gpu.func (MLIR text), for the emulator
        self.gpu = gpu                    # the "gpu" stage's text (kept with the program)
        self.stage_texts = {"kernels": kernels, "gpu": gpu, "ptx": ptx}
        self.steps = steps
        self._sizes = input_bytes + output_bytes
        self._inputs = len(input_bytes)
        self._driver = driver
        self._functions: dict[str, int] | None = None
        self._buffers: dict[str, int] | None = None
        self._owned: list[int] = []
        self._stream = None
        self._caller = None               # device_calls.DeviceCaller: made on the first device call
        self._staging = None              # pinned host memory run()'s transfers go through
        self.donations = dict(donations or {})    # donated input -> the output it may become
        # NCCL calls run between the kernels, launched one by one (not captured); so do
        # loops and branches, whose host reads the device between kernels
        self._graphs = GraphCache(use_graphs and not has_control_flow(steps) and not any(
            isinstance(s, Collective) for s in walk_steps(steps)))
        self._control: HostControl | None = None
        self._lock = threading.Lock()     # the buffers are the function's: one call at a time
        self.grid = grid                  # an SPMD program's device grid (None: one device)
        self._device, self._nccl, self._collectives = device, nccl, None

    def __call__(self, pointers: list[int]) -> None:
        """Host arrays in and out (``Executable.run``): through the function's own
        buffers, the transfers staged in pinned memory (asynchronous DMA)."""
        with self._lock:
            driver = self._driver = self._driver or open_driver(self._device)
            functions = self._load(driver)
            buffers = self._argument_slots(driver, self._device_memory(driver))
            self._staging = self._staging or ArgumentStaging(driver, self._sizes)
            slots = [buffers[f"arg{index}"] for index in range(len(self._sizes))]
            self._staging.copy_in(pointers[:self._inputs], slots, self._stream)
            self._launch_work(driver, functions, buffers)
            self._staging.copy_out(pointers[self._inputs:], slots[self._inputs:], self._stream)

    def device_call(self, values, signature) -> list:
        """Arrays on the device in and out (``Executable.__call__``): DeviceArrays,
        jax/torch/CuPy CUDA arrays (read in place) or host values (put on the device
        first); the results are DeviceArrays that the enqueued work is still
        writing. Donated inputs (``donations``) are deleted."""
        with self._lock:
            driver = self._driver = self._driver or open_driver(self._device)
            functions = self._load(driver)
            buffers = self._device_memory(driver)
            if self._caller is None:
                from xlac.targets.cuda.device_calls import DeviceCaller
                self._caller = DeviceCaller(driver, self._stream, signature, self.donations,
                                            self.steps, self.kernels)
            return self._caller.call(values, lambda arguments: self._launch_work(
                driver, functions, {**buffers, **arguments}))

    @staticmethod
    def takes_on_device(values) -> bool:
        """Is one of ``values`` on a GPU (then ``run`` reads them in place, no round trip)?"""
        from xlac.targets.cuda.device_array import is_device_value
        return any(is_device_value(value) for value in values)

    def _launch_work(self, driver, functions, env: dict[str, int]) -> None:
        """The device work with its buffers at ``env``'s pointers: one CUDA graph launch
        (``graphs.GraphCache``) or kernel by kernel."""
        key = tuple(env[f"arg{index}"] for index in range(len(self._sizes)))
        enqueue = lambda: self._run(self.steps, dict(env), driver, functions)  # noqa: E731
        if not self._graphs.launch(driver, self._stream, key, enqueue):
            enqueue()

    def with_driver(self, driver, nccl=None) -> CudaFunction:
        """The same program on another driver (and NCCL: fakes in tests), set up afresh."""
        inputs = self._sizes[:self._inputs]
        return CudaFunction(self.ptx, self.steps, inputs, self._sizes[self._inputs:], driver,
                            self.kernels, self.gpu, self._graphs.enabled, self.grid, self._device,
                            nccl or self._nccl, self.donations)

    def start_collectives(self) -> None:
        """Make the program's NCCL communicators: collective, once, on every rank
        after all of them compiled (``xlac.spmd.start``)."""
        if self.grid is None or not any(isinstance(s, Collective) for s in walk_steps(self.steps)):
            return
        from xlac.spmd.mpi import active_world
        from xlac.targets.cuda.nccl import NcclCollectives, NcclLibrary
        self._driver = self._driver or open_driver(self._device)     # NCCL needs the context
        self._nccl = self._nccl or NcclLibrary()
        self._collectives = NcclCollectives(self.steps, self._nccl, active_world(),
                                            self.grid.partitions)
        self._collectives.start()

    def serializer(self, entry: str, signature):
        return lambda: artifact_bytes(self, entry, signature)

    def _run(self, steps, env: dict[str, int], driver, functions) -> None:
        """The device-side work of one call, kernels and device-to-device copies (and the
        host's loops and branches around them): ``steps`` with the names in ``env``
        (a call's arguments, a region's, bound at run time)."""
        for step in steps:
            if isinstance(step, Copy):
                driver.copy_async(env[step.target], env[step.source], step.nbytes, self._stream)
            elif isinstance(step, Launch):
                _launch(driver, functions[step.kernel], step, env, self._stream)
            elif isinstance(step, View):
                env[step.value] = env[step.source]      # the kernel applies the view's offset
            elif isinstance(step, Collective):
                if self._collectives is None:
                    raise CudaError("a collective ran before the communicators were made: "
                                    "start the program on every rank (xlac.compile does)")
                self._collectives.run(step, env, driver, self._stream)
            elif not isinstance(step, (Alloc, Const)):   # made once, in _device_memory
                self._control.run(step, env, lambda region: self._run(region, env, driver, functions),
                                  self._stream)

    def close(self) -> None:
        """Free the device memory, graph and stream (the next call sets them up again)."""
        driver, owned = self._driver, self._owned
        self._buffers, self._owned = None, []
        if self._collectives is not None:
            self._collectives.close()
            self._collectives = None
        if driver is not None:
            if self._control is not None:
                self._control.close()
            self._graphs.close(driver)
            if self._staging is not None:
                self._staging.close()
            for pointer in owned:
                driver.free(pointer)
            if self._stream is not None:
                driver.destroy_stream(self._stream)
        self._stream = self._control = self._staging = self._caller = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the driver may be gone
            pass

    def _load(self, driver) -> dict[str, int]:
        if self._functions is None:
            module = driver.load_module(self.ptx)
            kernels = {s.kernel for s in walk_steps(self.steps) if isinstance(s, Launch)}
            self._functions = {name: driver.function(module, name) for name in sorted(kernels)}
        return self._functions

    def _argument_slots(self, driver, buffers: dict[str, int]) -> dict[str, int]:
        """``buffers`` and the arguments' own buffers, which host arrays are copied
        through (``__call__``), allocated on its first call; a call on device arrays
        binds the arrays themselves."""
        if "arg0" not in buffers and self._sizes:
            for index, nbytes in enumerate(self._sizes):
                buffers[f"arg{index}"] = self._allocate(driver, nbytes)
        return buffers

    def _device_memory(self, driver) -> dict[str, int]:
        """Every buffer the schedule makes, allocated (and constants uploaded) once; views
        are bound as the steps run."""
        if self._buffers is not None:
            return self._buffers
        self._stream = driver.create_stream()
        buffers = {}
        for step in walk_steps(self.steps):               # in loops and branches: fixed slots
            if isinstance(step, Alloc):
                buffers[step.value] = self._allocate(driver, step.nbytes)
            elif isinstance(step, Const):
                buffers[step.value] = self._allocate(driver, len(step.data))
                host = ctypes.create_string_buffer(step.data, len(step.data))
                driver.to_device(buffers[step.value], ctypes.addressof(host), len(step.data))
        if has_control_flow(self.steps):
            self._control = HostControl(self.steps, buffers, lambda n: self._allocate(driver, n), driver)
        self._buffers = buffers
        return buffers

    def _allocate(self, driver, nbytes: int) -> int:
        pointer = driver.alloc(nbytes)
        self._owned.append(pointer)
        return pointer


def _launch(driver, function: int, step: Launch, buffers: dict[str, int], stream) -> None:
    values = [ctypes.c_uint64(buffers[value]) if kind == "buf" else _SCALARS[kind](value)
              for kind, value in step.args]
    params = (ctypes.c_void_p * max(1, len(values)))(
        *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
    driver.launch(function, step.grid, step.block, step.smem, params, stream)


def function_for(ptx: str, steps: list, signature, kernels: str, gpu: str, options,
                 grid=None, donations: dict[int, int] | None = None) -> CudaFunction:
    """The runtime function of a compiled (or cached) program."""
    return CudaFunction(ptx, steps, [s.nbytes for s in signature.inputs],
                        [s.nbytes for s in signature.outputs], kernels=kernels, gpu=gpu,
                        use_graphs=options.cuda_graphs, grid=grid, device=options.local_rank,
                        donations=donations)


def load_function(artifact, options) -> CudaFunction:
    """The CudaFunction of a checked cuda artifact (``container.read_artifact``)."""
    code = read_code(artifact)
    return function_for(code.ptx, code.steps, artifact.signature, code.kernels, code.gpu, options,
                        artifact.grid, code.donations)
