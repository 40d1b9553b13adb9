"""The GPU's clock around each kernel of a profiled CUDA program (``exe.profile()``).

A timing event is recorded on the function's stream before and after every launch
and device copy; once the stream is synchronized, ``cuEventElapsedTime`` from the
first event ever recorded gives each one's start and end on the GPU's own clock,
so queueing on the host is not counted. The records have the CPU kernel clock's
form, ``(kernel id, start ns, end ns)``, which ``xlac.debug.profile`` reads.
"""

from __future__ import annotations


class EventClock:
    """Records ``(kernel id, start ns, end ns)`` for every launch and copy a call makes."""

    track = "GPU stream"                            # the trace's name for where they ran

    def __init__(self):
        self.names: list[str] = []
        self._ids: dict[str, int] = {}
        self._driver = self._stream = None          # the function's, from its first call
        self._origin: int | None = None            # the first event: time zero of the trace
        self._pending: list[tuple[int, int, int]] = []   # kernel id, start event, end event
        self._spare: list[int] = []                 # settled events, recorded again later
        self._events: list[tuple[int, int, int]] = []
        self.read_backs = 0                         # host control flow's synchronous reads

    def timed(self, driver, name: str, stream: int, enqueue) -> None:
        """``enqueue()`` (work on ``stream``) between two timing events, as ``name``."""
        self._driver, self._stream = driver, stream
        if self._origin is None:
            self._origin = self._driver.create_timing_event()
            self._driver.record_event(self._origin, stream)
        start, end = self._event(), self._event()
        self._driver.record_event(start, stream)
        enqueue()
        self._driver.record_event(end, stream)
        self._pending.append((self._id(name), start, end))

    def read_back(self) -> None:
        self.read_backs += 1

    def settle(self) -> None:
        """Wait for the stream, then turn the recorded events into times."""
        if not self._pending:
            return
        self._driver.stream_synchronize(self._stream)
        elapsed = self._driver.event_elapsed_ms
        for kernel, start, end in self._pending:
            self._events.append((kernel, _ns(elapsed(self._origin, start)),
                                 _ns(elapsed(self._origin, end))))
            self._spare += [start, end]
        self._pending.clear()

    @property
    def events(self) -> list[tuple[int, int, int]]:
        self.settle()
        return self._events

    def clear(self) -> None:
        self.settle()
        self._events.clear()
        self.read_backs = 0

    def close(self) -> None:
        """Destroy the events (the function's ``close``)."""
        if self._driver is None:
            return
        self.settle()
        for event in self._spare + ([self._origin] if self._origin is not None else []):
            self._driver.destroy_event(event)
        self._spare, self._origin = [], None

    def _event(self) -> int:
        return self._spare.pop() if self._spare else self._driver.create_timing_event()

    def _id(self, name: str) -> int:
        if name not in self._ids:
            self._ids[name] = len(self.names)
            self.names.append(name)
        return self._ids[name]


def _ns(milliseconds: float) -> int:
    return round(milliseconds * 1e6)
