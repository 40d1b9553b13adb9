"""Device memory as JAX and PyTorch users hold it: buffers from a stream-ordered
pool, events that say when a buffer's contents are ready, and pinned host memory
that transfers are staged through.

Why a pool: a result that stays on the device needs a fresh buffer per call, and
``cuMemAlloc``/``cuMemFree`` synchronize the device and cost tens of microseconds.
``cuMemAllocAsync``/``cuMemFreeAsync`` take memory from the device's default
pool in stream order, and with a release threshold of "everything" the pool keeps
freed memory instead of giving it back to the driver at each synchronization: a
steady loop of calls gets its buffers back from the pool without a driver
allocation (XLA's BFC allocator and PyTorch's caching allocator do the same).

Why pinned staging: a copy from pageable memory is copied by the driver through
its own pinned bounce buffer and returns only when done; from page-locked memory
it is a DMA that runs asynchronously on the stream.
"""

from __future__ import annotations

import ctypes
import threading

_RELEASE_EVERYTHING_NEVER = (1 << 64) - 1   # the pool keeps what is freed until the process ends
_EVENTS_KEPT = 64


class Event:
    """A CUDA event recorded on a stream: the work enqueued there before it.

    Handles are reused (a call records one: creating and destroying it each time
    would be two more driver calls), which is safe because a stream that waits on
    an event waits for what it recorded then, not for a later recording."""

    def __init__(self, driver, stream: int):
        self._driver = driver
        spare = _spare_events(driver)
        self.handle = spare.pop() if spare else driver.create_event()
        self.stream = stream
        self._waiting: tuple = ()            # streams already made to wait (stream order keeps it)
        driver.record_event(self.handle, stream)

    def wait_on(self, stream: int) -> None:
        """Make ``stream`` wait for this event (device side; the host does not wait)."""
        if stream != self.stream and stream not in self._waiting:
            self._driver.wait_event(stream, self.handle)
            self._waiting += (stream,)

    def synchronize(self) -> None:
        self._driver.event_synchronize(self.handle)

    def __del__(self):
        spare = _spare_events(self._driver)
        if len(spare) < _EVENTS_KEPT:
            spare.append(self.handle)
            return
        try:
            self._driver.destroy_event(self.handle)
        except Exception:  # noqa: BLE001 - at interpreter exit the driver may be gone
            pass


def _spare_events(driver) -> list[int]:
    """The driver's event handles that no Event holds (kept with the driver)."""
    return driver.__dict__.setdefault("_xlac_spare_events", [])


class PoolBuffer:
    """Device memory from the pool, freed in stream order on its home stream once
    every stream that used it (``used_on``) has done so."""

    def __init__(self, context: DeviceContext, nbytes: int, stream: int):
        self._context = context
        self.nbytes = nbytes
        self.pointer = context.driver.alloc_async(nbytes, stream)
        self.stream = stream
        self._users: set[int] = set()

    def used_on(self, stream: int) -> None:
        if stream != self.stream:
            self._users.add(stream)

    def release(self) -> None:
        """Give the memory back to the pool after the work already enqueued on it."""
        if self.pointer is None:
            return
        pointer, self.pointer = self.pointer, None
        driver = self._context.driver
        # the last reference may go on any thread (a garbage collection, a worker's
        # result dropped): one that never made the GPU's context current would fail
        # the free, which __del__ can only swallow, and the memory would leak
        driver.make_current()
        for stream in self._users:                 # work other streams enqueued on it
            Event(driver, stream).wait_on(self.stream)
        driver.free_async(pointer, self.stream)

    def __del__(self):
        try:
            self.release()
        except Exception:  # noqa: BLE001 - at interpreter exit the driver may be gone
            pass


class ForeignBuffer:
    """Device memory another library owns (jax, torch, CuPy), kept alive by
    ``owner`` for as long as an xlac array uses it; ``on_release`` (a DLPack
    deleter) runs when the last user lets go."""

    def __init__(self, pointer: int, nbytes: int, owner, on_release=None):
        self.pointer, self.nbytes, self.stream = pointer, nbytes, None
        self._owner, self._on_release = owner, on_release

    def used_on(self, stream: int) -> None:
        pass                                        # its owner's streams order its free

    def release(self) -> None:
        callback, self._on_release, self._owner, self.pointer = self._on_release, None, None, None
        if callback is not None:
            callback()

    def __del__(self):
        self.release()


class PinnedStaging:
    """One page-locked host buffer, grown on demand, that transfers go through.

    ``take(nbytes)`` returns its address after the transfers of its previous use
    finished (their event), so an asynchronous copy never reads a buffer that the
    host is already filling for the next one.
    """

    def __init__(self, driver):
        self._driver = driver
        self._pointer, self._size, self._last = None, 0, None

    def take(self, nbytes: int) -> int:
        if self._last is not None:
            self._last.synchronize()
            self._last = None
        if nbytes > self._size:
            if self._pointer is not None:
                self._driver.free_host(self._pointer)
            self._size = max(nbytes, 2 * self._size, 1 << 16)
            self._pointer = self._driver.alloc_host(self._size)
        return self._pointer

    def in_use_until(self, event: Event) -> None:
        self._last = event

    def close(self) -> None:
        if self._pointer is not None:
            self._driver.free_host(self._pointer)
            self._pointer, self._size = None, 0


class ArgumentStaging:
    """Pinned memory for every argument of a program called with host arrays
    (``CudaFunction.__call__``): the inputs are copied into it and DMA'd to the
    device, the outputs DMA'd back into it and copied out."""

    def __init__(self, driver, sizes: list[int]):
        self._driver, self._sizes = driver, sizes
        self._offsets = [0]
        for nbytes in sizes:
            self._offsets.append(self._offsets[-1] + (nbytes + 255) // 256 * 256)   # DMA-aligned
        self._pointer = driver.alloc_host(max(self._offsets[-1], 1))

    def copy_in(self, hosts: list[int], slots: list[int], stream: int) -> None:
        for index, host in enumerate(hosts):
            staged, nbytes = self._pointer + self._offsets[index], self._sizes[index]
            ctypes.memmove(staged, host, nbytes)
            self._driver.to_device_async(slots[index], staged, nbytes, stream)

    def copy_out(self, hosts: list[int], slots: list[int], stream: int) -> None:
        """The outputs (the last ``len(hosts)`` arguments), after the stream's work."""
        first = len(self._sizes) - len(hosts)
        for index, slot in enumerate(slots, first):
            self._driver.to_host_async(self._pointer + self._offsets[index], slot,
                                       self._sizes[index], stream)
        self._driver.stream_synchronize(stream)
        for index, host in enumerate(hosts, first):
            ctypes.memmove(host, self._pointer + self._offsets[index], self._sizes[index])

    def close(self) -> None:
        self._driver.free_host(self._pointer)


class DeviceContext:
    """A driver's device as arrays use it: the pool, a stream for transfers that no
    program makes (``device_put``, reading a result) and their pinned staging."""

    def __init__(self, driver):
        self.driver = driver
        driver.use_default_pool(_RELEASE_EVERYTHING_NEVER)
        self.transfer_stream = driver.create_stream()
        self._staging = PinnedStaging(driver)
        self._lock = threading.Lock()              # the staging buffer is shared

    @property
    def ordinal(self) -> int:
        return getattr(self.driver, "ordinal", 0)

    def allocate(self, nbytes: int, stream: int) -> PoolBuffer:
        return PoolBuffer(self, nbytes, stream)

    def upload(self, arrays: list, stream: int | None = None) -> tuple[list[PoolBuffer], Event]:
        """Device copies of host ``arrays`` (C-contiguous ndarrays), staged through
        pinned memory and copied asynchronously on ``stream`` (default: the
        transfer stream); the event says when they are there."""
        stream = self.transfer_stream if stream is None else stream
        with self._lock:
            staging = self._staging.take(sum(a.nbytes for a in arrays))
            buffers, offset = [], 0
            for array in arrays:
                ctypes.memmove(staging + offset, array.ctypes.data, array.nbytes)
                buffer = self.allocate(array.nbytes, stream)
                self.driver.to_device_async(buffer.pointer, staging + offset, array.nbytes, stream)
                buffers.append(buffer)
                offset += array.nbytes
            event = Event(self.driver, stream)
            self._staging.in_use_until(event)
        return buffers, event

    def download(self, target, pointer: int, ready: Event | None) -> None:
        """Copy ``target.nbytes`` from the device into the host ndarray ``target``
        through pinned memory, after ``ready``; returns when the bytes are there."""
        stream, nbytes = self.transfer_stream, target.nbytes
        with self._lock:
            staging = self._staging.take(nbytes)
            if ready is not None:
                ready.wait_on(stream)
            self.driver.to_host_async(staging, pointer, nbytes, stream)
            self.driver.stream_synchronize(stream)
            ctypes.memmove(target.ctypes.data, staging, nbytes)


def device_context(driver) -> DeviceContext:
    """The driver's DeviceContext, made on first use."""
    context = getattr(driver, "_xlac_context", None)
    if context is None:
        context = driver._xlac_context = DeviceContext(driver)
    return context
