"""Running a CUDA program: its host schedule on the driver (``driver.py``).

No CUDA package is needed at run time: ``libcuda.so.1`` comes with the
NVIDIA driver. ``CudaFunction`` has the CPU function's interface (called
with host pointers of the inputs, then the outputs), so ``Executable`` is
the same for both targets. Device buffers and constants are set up on the
first call and reused; each call copies the inputs in, runs the schedule on
the function's stream (captured once as a CUDA graph, then launched whole;
``use_graphs=False``, XLAC_CUDA_GRAPHS=0, launches kernel by kernel) and copies the outputs back.
``profiled()`` is the same program launched kernel by kernel with a timing event
on each side of every launch and copy (``event_clock.py``, for ``exe.profile()``).
"""

from __future__ import annotations

import ctypes
import threading

from xlac.targets.cuda.control_flow import ReadBack, has_control_flow, walk_steps
from xlac.targets.cuda.control_runtime import HostControl
from xlac.targets.cuda.driver import open_driver
from xlac.targets.cuda.errors import CudaError, CudaUnavailable  # noqa: F401 (the runtime's errors)
from xlac.targets.cuda.faults import guarded_call, launched
from xlac.targets.cuda.gemm_step import Gemm
from xlac.targets.cuda.graphs import GraphCache
from xlac.targets.cuda.memory import ArgumentStaging
from xlac.targets.cuda.serialize import artifact_bytes, read_code
from xlac.targets.cuda.steps import Alloc, Collective, Const, Copy, Launch, View

_SCALARS = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
            "i64": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double}


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
                 grid=None, device: int = 0, nccl=None, donations: dict[int, int] | None = None,
                 exact_device: bool = False, blas=None):
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
        self._lock = threading.RLock()    # the buffers are the function's: one call at a time
        self.grid = grid                  # an SPMD program's device grid (None: one device)
        self._device, self._nccl, self._collectives = device, nccl, None
        self._blas, self._gemms = blas, None      # cuBLASLt (or a fake's), its calls' plans
        self._exact_device = exact_device         # device= given: that GPU, not the rank's
        self.last_kernel = ""                     # named when a kernel faults (faults.py)
        self.clock = None                         # event_clock.EventClock of a profiled() copy

    def __call__(self, pointers: list[int]) -> None:
        """Host arrays in and out (``Executable.run``): through the function's own
        buffers, the transfers staged in pinned memory (asynchronous DMA)."""
        with self._lock:                           # the buffers are the function's
            driver = self._open()
            with guarded_call(driver, self):       # the context made this thread's, errors translated
                functions = self._load(driver)
                buffers = self._argument_slots(driver, self._device_memory(driver))
                self._staging = self._staging or ArgumentStaging(driver, self._sizes)
                slots = [buffers[f"arg{index}"] for index in range(len(self._sizes))]
                self._staging.copy_in(pointers[:self._inputs], slots, self._stream)
                self._launch_work(driver, functions, buffers)
                self._staging.copy_out(pointers[self._inputs:], slots[self._inputs:], self._stream)
                if self.clock is not None:             # synchronized: the events are read now
                    self.clock.settle()

    def device_call(self, values, signature) -> list:
        """Arrays on the device in and out (``Executable.__call__``): DeviceArrays,
        jax/torch/CuPy CUDA arrays (read in place) or host values (put on the device
        first); the results are DeviceArrays that the enqueued work is still
        writing. Donated inputs (``donations``) are deleted."""
        with self._lock:
            driver = self._open()
            with guarded_call(driver, self):
                functions = self._load(driver)
                buffers = self._device_memory(driver)
                if self._caller is None:
                    from xlac.targets.cuda.device_calls import DeviceCaller
                    self._caller = DeviceCaller(driver, self._stream, signature, self.donations,
                                                self.steps, self.kernels)
                return self._caller.call(values, lambda arguments: self._launch_work(
                    driver, functions, {**buffers, **arguments}))

    def _open(self):
        """This function's driver (``device=``'s GPU, or the rank's), opened on first use."""
        self._driver = self._driver or open_driver(self._device, self._exact_device)
        return self._driver

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

    def profiled(self) -> CudaFunction:
        """The same program with its own buffers, each launch and device copy timed by
        CUDA events (``clock``): launched kernel by kernel, as a graph would hide them."""
        from xlac.targets.cuda.event_clock import EventClock
        if any(isinstance(step, Collective) for step in walk_steps(self.steps)):
            # the copy would need communicators of its own, made on every rank at once
            raise CudaError("exe.profile() cannot time a program with collectives (NCCL) yet: "
                            "profile one partition's program without them")
        other = self.with_driver(self._driver, self._nccl, self._blas)
        other._graphs = GraphCache(False)
        other.clock = EventClock()
        return other

    in_graph = property(lambda self: len(self._graphs) > 0)   # calls replay CUDA graphs

    def with_driver(self, driver, nccl=None, blas=None) -> CudaFunction:
        """The same program on another driver (and NCCL, cuBLASLt: fakes in tests), set up afresh."""
        inputs = self._sizes[:self._inputs]
        return CudaFunction(self.ptx, self.steps, inputs, self._sizes[self._inputs:], driver,
                            self.kernels, self.gpu, self._graphs.enabled, self.grid, self._device,
                            nccl or self._nccl, self.donations, self._exact_device,
                            blas or self._blas)

    def start_collectives(self) -> None:
        """Make the program's NCCL communicators: collective, once, on every rank
        after all of them compiled (``xlac.spmd.start``)."""
        if self.grid is None or not any(isinstance(s, Collective) for s in walk_steps(self.steps)):
            return
        from xlac.spmd.mpi import active_world
        from xlac.targets.cuda.nccl import NcclCollectives, NcclLibrary
        self._open()                               # NCCL: the context
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
            if self.clock is not None and isinstance(step, (Copy, Launch, Gemm)):
                self._timed(step, env, driver, functions)
            elif isinstance(step, Copy):
                driver.copy_async(env[step.target], env[step.source], step.nbytes, self._stream)
            elif isinstance(step, Launch):
                self.last_kernel = step.kernel
                launched(driver, step.kernel)
                _launch(driver, functions[step.kernel], step, env, self._stream)
            elif isinstance(step, Gemm):
                self.last_kernel = gemm_name(step)
                launched(driver, self.last_kernel)
                self._gemms.run(step, env)
            elif isinstance(step, View):
                env[step.value] = env[step.source]      # the kernel applies the view's offset
            elif isinstance(step, Collective):
                if self._collectives is None:
                    raise CudaError("a collective ran before the communicators were made: "
                                    "start the program on every rank (xlac.compile does)")
                self._collectives.run(step, env, driver, self._stream)
            elif not isinstance(step, (Alloc, Const)):   # made once, in _device_memory
                if isinstance(step, ReadBack) and self.clock is not None:
                    self.clock.read_back()
                self._control.run(step, env, lambda region: self._run(region, env, driver, functions),
                                  self._stream)

    def _timed(self, step, env: dict[str, int], driver, functions) -> None:
        """A launch or device copy of a ``profiled()`` copy, between two timing events;
        a launch is named after its kernel, a copy after what it moves."""
        if isinstance(step, Copy):
            self.clock.timed(driver, f"memcpy device->device {step.nbytes} B", self._stream,
                             lambda: driver.copy_async(env[step.target], env[step.source],
                                                       step.nbytes, self._stream))
        elif isinstance(step, Gemm):
            self.last_kernel = gemm_name(step)
            self.clock.timed(driver, self.last_kernel, self._stream,
                             lambda: self._gemms.run(step, env))
        else:
            self.last_kernel = step.kernel
            self.clock.timed(driver, step.kernel, self._stream, lambda: _launch(
                driver, functions[step.kernel], step, env, self._stream))

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
            if self._gemms is not None:
                self._gemms.close()
            self._graphs.close(driver)
            if self.clock is not None:
                self.clock.close()
            if self._staging is not None:
                self._staging.close()
            for pointer in owned:
                driver.free(pointer)
            if self._stream is not None:
                driver.destroy_stream(self._stream)
        self._stream = self._control = self._staging = self._caller = self._gemms = None

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
        if any(isinstance(step, Gemm) for step in walk_steps(self.steps)):
            from xlac.targets.cuda.cublaslt import CublasLt
            from xlac.targets.cuda.gemm_calls import GemmCalls
            self._blas = self._blas or CublasLt()
            self._gemms = GemmCalls(self.steps, self._blas, driver, self._stream)
        if has_control_flow(self.steps):
            self._control = HostControl(self.steps, buffers, lambda n: self._allocate(driver, n), driver)
        self._buffers = buffers
        return buffers

    def _allocate(self, driver, nbytes: int) -> int:
        pointer = driver.alloc(nbytes)
        self._owned.append(pointer)
        return pointer


def gemm_name(step: Gemm) -> str:
    """A Gemm step as profiles and fault messages name it."""
    batch = f"{step.batch}x" if step.batch > 1 else ""
    epilogue = f" +{step.epilogue}" if step.epilogue else ""
    origin = f" ({step.origin})" if step.origin else ""
    return (f"cublasLtMatmul {batch}{step.m}x{step.n}x{step.k} {step.elements[0]} "
            f"{step.compute}{epilogue}{origin}")


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
                        use_graphs=options.cuda_graphs, grid=grid,
                        device=options.local_rank if options.device < 0 else options.device,
                        exact_device=options.device >= 0, donations=donations)


def load_function(artifact, options) -> CudaFunction:
    """The CudaFunction of a checked cuda artifact (``container.read_artifact``)."""
    code = read_code(artifact)
    return function_for(code.ptx, code.steps, artifact.signature, code.kernels, code.gpu, options,
                        artifact.grid, code.donations)
