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
import sys
import threading

from xlac.targets.cuda.control_flow import has_control_flow, walk_steps
from xlac.targets.cuda.control_runtime import HostControl
from xlac.targets.cuda.errors import CudaError, CudaUnavailable
from xlac.targets.cuda.faults import guarded_call
from xlac.targets.cuda.schedule import Alloc, Collective, Const, Copy, Launch, View
from xlac.targets.cuda.serialize import artifact_bytes, read_code

_JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 5, 6
_STREAM_NON_BLOCKING = 1                 # no implicit synchronization with the legacy stream
_CAPTURE_THREAD_LOCAL = 1
_SCALARS = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
            "i64": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double}


class CtypesDriver:
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
        self.device = device if exact else device % max(count.value, 1)
        self.check("cuDeviceGet", ctypes.byref(handle), ctypes.c_int(self.device))
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
            _DRIVERS[device, exact] = CtypesDriver(device=device, exact=exact)
        return _DRIVERS[device, exact]


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
                 grid=None, device: int = 0, nccl=None, exact_device: bool = False):
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
        self._graph = None
        # NCCL calls run between the kernels, launched one by one (not captured); so do
        # loops and branches, whose host reads the device between kernels
        self._use_graph = use_graphs and not any(isinstance(s, Collective) for s in walk_steps(steps)) \
            and not has_control_flow(steps)
        self._control: HostControl | None = None
        self._lock = threading.RLock()    # the buffers are the function's: one call at a time
        self.grid = grid                  # an SPMD program's device grid (None: one device)
        self._device, self._nccl, self._collectives = device, nccl, None
        self._exact_device = exact_device         # device= given: that GPU, not the rank's
        self.last_kernel = ""                     # named when a kernel faults (faults.py)

    def __call__(self, pointers: list[int]) -> None:
        with self._lock:                           # reentrant: _call takes it again
            driver = self._driver = self._driver or open_driver(self._device, self._exact_device)
            with guarded_call(driver, self):       # the context made this thread's, errors translated
                self._call(pointers)

    def _call(self, pointers: list[int]) -> None:
        with self._lock:
            driver = self._driver = self._driver or open_driver(self._device, self._exact_device)
            functions = self._load(driver)
            buffers = self._device_memory(driver)
            stream = self._stream
            for index in range(self._inputs):
                driver.to_device_async(buffers[f"arg{index}"], pointers[index], self._sizes[index], stream)
            if self._graph is None and self._use_graph:
                self._capture(driver, functions, buffers)
            if self._graph is not None:
                driver.launch_graph(self._graph, stream)
            else:
                self._enqueue(driver, functions, buffers)
            for index in range(self._inputs, len(pointers)):
                driver.to_host_async(pointers[index], buffers[f"arg{index}"], self._sizes[index], stream)
            driver.stream_synchronize(stream)

    in_graph = property(lambda self: self._graph is not None)   # calls replay a CUDA graph

    def with_driver(self, driver, nccl=None) -> CudaFunction:
        """The same program on another driver (and NCCL: fakes in tests), set up afresh."""
        inputs = self._sizes[:self._inputs]
        return CudaFunction(self.ptx, self.steps, inputs, self._sizes[self._inputs:], driver,
                            self.kernels, self.gpu, self._use_graph, self.grid, self._device,
                            nccl or self._nccl, self._exact_device)

    def start_collectives(self) -> None:
        """Make the program's NCCL communicators: collective, once, on every rank
        after all of them compiled (``xlac.spmd.start``)."""
        if self.grid is None or not any(isinstance(s, Collective) for s in walk_steps(self.steps)):
            return
        from xlac.spmd.mpi import active_world
        from xlac.targets.cuda.nccl import NcclCollectives, NcclLibrary
        self._driver = self._driver or open_driver(self._device, self._exact_device)  # NCCL: the context
        self._nccl = self._nccl or NcclLibrary()
        self._collectives = NcclCollectives(self.steps, self._nccl, active_world(),
                                            self.grid.partitions)
        self._collectives.start()

    def serializer(self, entry: str, signature):
        return lambda: artifact_bytes(self, entry, signature)

    def _enqueue(self, driver, functions, buffers) -> None:
        """The device-side work of one call: kernels and device-to-device copies (and
        the host's loops and branches around them)."""
        self._run(self.steps, dict(buffers), driver, functions)

    def _run(self, steps, env: dict[str, int], driver, functions) -> None:
        """``steps`` with the names in ``env`` (a region's arguments bound at run time)."""
        for step in steps:
            if isinstance(step, Copy):
                driver.copy_async(env[step.target], env[step.source], step.nbytes, self._stream)
            elif isinstance(step, Launch):
                self.last_kernel = step.kernel
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

    def _capture(self, driver, functions, buffers) -> None:
        """Record the device work once as a CUDA graph: then a call is one graph launch,
        not one Python driver call per kernel. If the driver refuses, launch one by one."""
        try:
            driver.begin_capture(self._stream)
        except CudaError as error:
            return self._no_graph(error)
        try:
            self._enqueue(driver, functions, buffers)
        except CudaError:
            driver.end_capture(self._stream)
            raise
        try:
            self._graph = driver.end_capture(self._stream)
        except CudaError as error:
            self._no_graph(error)

    def _no_graph(self, error: CudaError) -> None:
        self._use_graph = False
        print(f"xlac: CUDA graph capture failed ({error}); launching kernels one by one",
              file=sys.stderr)

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
            if self._graph is not None:
                driver.destroy_graph(self._graph)
            for pointer in owned:
                driver.free(pointer)
            if self._stream is not None:
                driver.destroy_stream(self._stream)
        self._stream = self._graph = self._control = None

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

    def _device_memory(self, driver) -> dict[str, int]:
        """Every buffer the schedule makes, allocated (and constants uploaded) once; views
        are bound as the steps run."""
        if self._buffers is not None:
            return self._buffers
        self._stream = driver.create_stream()
        buffers = {}
        for index, nbytes in enumerate(self._sizes):
            buffers[f"arg{index}"] = self._allocate(driver, nbytes)
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
                 grid=None) -> CudaFunction:
    """The runtime function of a compiled (or cached) program."""
    return CudaFunction(ptx, steps, [s.nbytes for s in signature.inputs],
                        [s.nbytes for s in signature.outputs], kernels=kernels, gpu=gpu,
                        use_graphs=options.cuda_graphs, grid=grid,
                        device=options.local_rank if options.device < 0 else options.device,
                        exact_device=options.device >= 0)


def load_function(artifact, options) -> CudaFunction:
    """The CudaFunction of a checked cuda artifact (``container.read_artifact``)."""
    code = read_code(artifact)
    return function_for(code.ptx, code.steps, artifact.signature, code.kernels, code.gpu, options,
                        artifact.grid)
