"""``xlac.DeviceArray``: an array in GPU memory, as a jax.Array or a torch CUDA
tensor is, and the ways in and out of it.

A compiled cuda program called with DeviceArrays reads them where they are and
returns its results as DeviceArrays, still on the device and possibly still
being computed (``block_until_ready``, ``numpy()`` and ``np.asarray`` wait). Other
libraries' GPU arrays come in without a copy through DLPack (``__dlpack__``) or
``__cuda_array_interface__``, and DeviceArrays go out to them the same ways.
Stream rules: whoever reads an array on a stream first makes that stream wait for
the event recorded when the array was written (``memory.Event``), on the device,
without blocking the host.
"""

from __future__ import annotations

import numpy as np

from xlac.errors import InputError
from xlac.targets.cuda import dlpack
from xlac.targets.cuda.faults import guarded_wait
from xlac.targets.cuda.memory import Event, ForeignBuffer, device_context

_NO_SYNC = -1                                   # DLPack: the consumer takes care of it
_LEGACY_STREAM, _PER_THREAD_STREAM = 1, 2       # CU_STREAM_LEGACY, CU_STREAM_PER_THREAD


class Device:
    """A GPU as arrays name it: ``cuda:0``."""

    platform = "cuda"

    def __init__(self, ordinal: int = 0):
        self.id = ordinal

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("cuda", self.id))

    def __repr__(self) -> str:
        return f"cuda:{self.id}"


class DeviceArray:
    """An array in device memory: ``shape``, ``dtype``, ``device``, ``nbytes``.

    ``numpy()`` (or ``np.asarray``) copies it to the host, waiting for the work
    that writes it; ``block_until_ready()`` only waits. A donated array (an input
    of a program compiled with ``donate_argnums``) is deleted: its memory became
    the program's, and any further use is an error saying so.
    """

    sub_byte = None               # "i4", "ui2"...: such integers lie in the low bits of bytes

    def __init__(self, buffer, shape: tuple, dtype, context, ready: Event | None = None):
        self._buffer = buffer
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self._context = context
        self._ready = ready

    @property
    def device(self) -> Device:
        return Device(self._context.ordinal)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def is_deleted(self) -> bool:
        return self._buffer is None

    @property
    def pointer(self) -> int:
        """The device address of the first element."""
        return self._live_buffer().pointer

    def block_until_ready(self) -> DeviceArray:
        self._live_buffer()
        if self._ready is not None:
            with guarded_wait(self._context.driver):      # a kernel fault found here: named
                self._ready.synchronize()
        return self

    def numpy(self) -> np.ndarray:
        """A host copy (a fresh ndarray), after the work that writes this array."""
        buffer = self._live_buffer()
        host = np.empty(self.shape, self.dtype)
        if host.nbytes:
            with guarded_wait(self._context.driver):
                self._context.download(host, buffer.pointer, self._ready)
        if self.sub_byte is not None:                 # as Executable.run returns them
            from xlac.calls import widen_sub_byte
            host = widen_sub_byte(host, self.sub_byte)
        return host

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a DeviceArray is in GPU memory: numpy can only copy it "
                             "(np.asarray(a) or a.numpy())")
        host = self.numpy()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        kind = f"{self.dtype}{list(self.shape)}"
        if self.is_deleted:
            return f"DeviceArray({kind}, device={self.device}, deleted)"
        return f"DeviceArray({np.array2string(self.numpy(), separator=', ')}, dtype={kind}, " \
               f"device={self.device})"

    # the ways out: DLPack and the CUDA array interface (module docstring)
    def __dlpack_device__(self) -> tuple[int, int]:
        return dlpack.DL_CUDA, self._context.ordinal

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this array. ``stream``: the consumer's stream, which is
        made to wait for this array's writer (None: the legacy default stream, -1: the
        consumer synchronizes itself). ``max_version`` >= (1, 0): a versioned capsule.
        ``dl_device`` (kDLCPU, 0) with ``copy`` not False: a host copy."""
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            return self._host_capsule(tuple(dl_device), copy, versioned)
        buffer = self._live_buffer()
        consumer = _consumer_stream(stream)
        if consumer is not None:
            if self._ready is not None:
                self._ready.wait_on(consumer)
            buffer.used_on(consumer)
        source = self._copy_on_device() if copy else self
        return dlpack.export_capsule(source.pointer, self.shape, self.dtype,
                                     self.__dlpack_device__(), source, versioned, bool(copy))

    @property
    def __cuda_array_interface__(self) -> dict:
        """Version 3: ``stream`` is the stream whose work writes the array (None once done)."""
        buffer = self._live_buffer()
        stream = self._ready.stream if self._ready is not None and \
            not self._context.driver.event_done(self._ready.handle) else None
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (buffer.pointer, False),
                "strides": None, "version": 3, "stream": stream}

    def delete(self) -> None:
        """Let go of the device memory now (what donation does)."""
        buffer, self._buffer = self._buffer, None
        if buffer is not None:
            buffer.release()

    def _live_buffer(self):
        if self._buffer is None:
            raise InputError(f"a deleted DeviceArray ({self.dtype}{list(self.shape)}) was used: it "
                             "was donated to a program (donate_argnums) or deleted, and its memory "
                             "may already hold another array")
        return self._buffer

    def _host_capsule(self, device: tuple[int, int], copy, versioned: bool):
        if device != (dlpack.DL_CPU, 0) or copy is False:
            raise BufferError(f"a DeviceArray on {self.device} can be exported to {device} only "
                              "as a copy to the host (kDLCPU, copy not False)")
        host = self.numpy()
        return dlpack.export_capsule(host.ctypes.data, self.shape, self.dtype, device, host,
                                     versioned, copied=True)

    def _copy_on_device(self) -> DeviceArray:
        context, stream = self._context, self._context.transfer_stream
        if self._ready is not None:
            self._ready.wait_on(stream)
        buffer = context.allocate(self.nbytes, stream)
        context.driver.copy_async(buffer.pointer, self.pointer, self.nbytes, stream)
        self._live_buffer().used_on(stream)
        return DeviceArray(buffer, self.shape, self.dtype, context, Event(context.driver, stream))


def _consumer_stream(stream) -> int | None:
    """The stream handle a DLPack consumer named (None: it synchronizes itself)."""
    if stream == _NO_SYNC:
        return None
    if stream is None:
        return _LEGACY_STREAM
    if not isinstance(stream, int) or stream == 0:
        raise BufferError(f"stream={stream!r}: DLPack takes None, -1, 1 (legacy default stream), "
                          "2 (per-thread default stream) or a CUDA stream handle; 0 is ambiguous")
    return stream


def is_device_value(value) -> bool:
    """Does ``value`` live on a GPU (a DeviceArray, or another library's CUDA array)?"""
    if isinstance(value, DeviceArray):
        return True
    if isinstance(value, np.ndarray):
        return False
    if hasattr(value, "__cuda_array_interface__"):
        return True
    device = getattr(value, "__dlpack_device__", None)
    try:
        return device is not None and device()[0] == dlpack.DL_CUDA
    except Exception:  # noqa: BLE001 - a broken producer is a host value then
        return False


def as_device_array(value, driver, stream: int) -> DeviceArray:
    """``value`` as a DeviceArray on ``driver``'s device, ready for ``stream``: a
    DeviceArray as it is; another library's CUDA array without a copy (DLPack first,
    then the CUDA array interface, copied on the device only when it starts off a
    16-byte boundary); anything else is copied to the device."""
    context = device_context(driver)
    if isinstance(value, DeviceArray):
        if value._context is not context:
            raise InputError(f"a DeviceArray on another driver or device ({value.device}) was "
                             "given: move it with xlac.device_put")
        value._live_buffer()
        return value
    device = getattr(value, "__dlpack_device__", None)
    if device is not None and hasattr(value, "__dlpack__") and device()[0] == dlpack.DL_CUDA:
        return _aligned(_from_dlpack(value, context, stream))
    if hasattr(value, "__cuda_array_interface__"):
        return _aligned(_from_cuda_array_interface(value, context, stream))
    return put(value, context)


KERNEL_ALIGNMENT = 16        # kernels read and write 16-byte vectors (passes/gpu/gpu_kernel_vector.py)


def _aligned(array: DeviceArray) -> DeviceArray:
    """A foreign array as kernels may read it: its own memory where its pointer is
    16-byte aligned (allocators align to 256), else a copy (a slice such as x[1:])."""
    if array.pointer % KERNEL_ALIGNMENT == 0:
        return array
    return array._copy_on_device()


def _from_dlpack(value, context, stream: int) -> DeviceArray:
    try:
        capsule = value.__dlpack__(stream=stream, max_version=dlpack.VERSION)
    except TypeError:                              # a producer older than DLPack 1.0's keywords
        capsule = value.__dlpack__(stream=stream)
    tensor = dlpack.ImportedTensor(capsule)
    try:
        _check_foreign(tensor.pointer, tensor.device[1], tensor.is_c_contiguous(), context, value)
    except Exception:
        tensor.release()
        raise
    buffer = ForeignBuffer(tensor.pointer, tensor.nbytes, value, tensor.release)
    return DeviceArray(buffer, tensor.shape, tensor.dtype, context)


def _from_cuda_array_interface(value, context, stream: int) -> DeviceArray:
    interface = value.__cuda_array_interface__
    shape, dtype = tuple(interface["shape"]), np.dtype(interface["typestr"])
    pointer = interface["data"][0] or 0
    strides = interface.get("strides")
    contiguous = strides is None or dlpack.is_c_contiguous(
        shape, tuple(s // dtype.itemsize for s in strides)) and all(s % dtype.itemsize == 0
                                                                     for s in strides)
    if interface.get("mask") is not None:
        raise InputError(f"a masked CUDA array ({type(value).__name__}) cannot be an input")
    _check_foreign(pointer, context.ordinal, contiguous, context, value)
    producer = interface.get("stream") if interface.get("version", 0) >= 3 else None
    if producer == 0:
        raise InputError(f"{type(value).__name__}'s __cuda_array_interface__ has stream 0, "
                         "which the protocol forbids (ambiguous)")
    if producer is not None:                       # the producer's pending work, before ours
        Event(context.driver, producer).wait_on(stream)
    buffer = ForeignBuffer(pointer, int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, value)
    return DeviceArray(buffer, shape, dtype, context)


def _check_foreign(pointer: int, ordinal: int, contiguous: bool, context, value) -> None:
    what = type(value).__name__
    if not contiguous:
        raise InputError(f"a strided (not C-contiguous) {what} cannot be read in place: make it "
                         "contiguous first")
    located = context.driver.pointer_device(pointer) if pointer else context.ordinal
    if located is None:
        raise InputError(f"a {what} says it is on a GPU, but its memory at {pointer:#x} is not "
                         "device memory (the driver says so)")
    if located != context.ordinal or ordinal != context.ordinal:
        raise InputError(f"a {what} on cuda:{located} was given to a program on "
                         f"cuda:{context.ordinal}")


def put(value, context) -> DeviceArray:
    """A device copy of a host value (ndarray, list, scalar), staged through pinned memory."""
    host = np.asarray(value)
    if not host.flags.c_contiguous:                   # (np.ascontiguousarray makes 0-d 1-d)
        host = host.copy(order="C")
    if host.dtype.kind in "OSUM":
        raise InputError(f"an array of {host.dtype} cannot be put on a GPU")
    (buffer,), event = context.upload([host])
    return DeviceArray(buffer, host.shape, host.dtype, context, event)
