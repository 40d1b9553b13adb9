"""Running host control flow (``xlac.targets.cuda.control_flow``) with the driver.

Buffers, as XLA assigns a while loop's: every allocation inside a loop's or
branch's regions is a fixed slot, made once with the program's other
buffers; a region's arguments and results are names bound to pointers at run
time. A slot is reused by the next iteration, so what survives an iteration
(the body's yields) must not stay in one: each carried value has two state
buffers of its own, and a yield that lies in memory of the loop (a slot of
its regions, a nested loop's state, another carried value's state buffer) is
copied into the state buffer of its value that the current value does not
hold (a swap of two carried values is right), while a yield in memory from
outside the loop (the loop's inputs, buffers made before it) or already in its
own state buffer is carried as its pointer: no copy, as bufferization wrote it.

A predicate or case index is copied to pinned host memory and the stream
synchronized (``ReadBack``); a counted loop reads nothing back.
"""

from __future__ import annotations

import ctypes

from xlac.targets.cuda.control_flow import Branch, Loop, ReadBack, walk_steps
from xlac.targets.cuda.steps import Alloc

_READS = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
          "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16, "u32": ctypes.c_uint32,
          "u64": ctypes.c_uint64}
_PINNED_BYTES = 8                          # the widest scalar read back


class HostControl:
    """The state buffers and pinned memory of a schedule's loops, branches and
    read-backs, and the host side of running them."""

    def __init__(self, steps: list, buffers: dict[str, int], allocate, driver):
        self._driver = driver
        self._states: dict[int, list[tuple[int, int]]] = {}
        self._owned: dict[int, set[int]] = {}
        loops = [step for step in walk_steps(steps) if isinstance(step, Loop)]
        for loop in loops:
            self._states[id(loop)] = [(allocate(n), allocate(n)) for n in loop.nbytes]
        for loop in loops:
            inner = list(walk_steps(loop.before + loop.body))
            owned = {buffers[s.value] for s in inner if isinstance(s, Alloc)}
            for nested in [loop] + [s for s in inner if isinstance(s, Loop)]:
                owned.update(p for pair in self._states[id(nested)] for p in pair)
            self._owned[id(loop)] = owned
        self._pinned = driver.alloc_host(_PINNED_BYTES) \
            if any(isinstance(s, ReadBack) for s in walk_steps(steps)) else None

    def run(self, step, env: dict, run_steps, stream) -> None:
        """Run ``step`` (a Loop, Branch or ReadBack); ``run_steps(steps)`` runs a region."""
        if isinstance(step, ReadBack):
            env[step.value] = self._read(env[step.source] + step.offset, step.element, stream)
        elif isinstance(step, Branch):
            selector = env[step.selector]
            taken = step.keys.index(selector) + 1 if selector in step.keys else 0
            run_steps(step.regions[taken])
            env.update(zip(step.results, [env[n] for n in step.yielded[taken]]))
        else:
            self._loop(step, env, run_steps, stream)

    def _loop(self, loop: Loop, env: dict, run_steps, stream) -> None:
        current, trip = [env[n] for n in loop.init], 0
        while True:
            if loop.trips >= 0:
                if trip == loop.trips:
                    final = current
                    break
                arguments = current
            else:
                env.update(zip(loop.state, current))
                run_steps(loop.before)
                if not env[loop.predicate]:
                    final = [env[n] for n in loop.forwarded]
                    break
                arguments = [env[n] for n in loop.forwarded]
            env.update(zip(loop.arguments, arguments))
            run_steps(loop.body)
            current = self._carry(loop, [env[n] for n in loop.yielded], current, stream)
            trip += 1
        env.update(zip(loop.results, final))

    def _carry(self, loop: Loop, yielded: list[int], current: list[int], stream) -> list[int]:
        """The pointers the next iteration starts from (module docstring: when a copy)."""
        owned, carried = self._owned[id(loop)], []
        for value, now, (first, second), nbytes in zip(yielded, current, self._states[id(loop)],
                                                       loop.nbytes):
            if value in (first, second) or value not in owned:
                carried.append(value)
                continue
            free = second if now == first else first
            self._driver.copy_async(free, value, nbytes, stream)
            carried.append(free)
        return carried

    def _read(self, pointer: int, element: str, stream):
        kind = _READS[element]
        self._driver.to_host_async(self._pinned, pointer, ctypes.sizeof(kind), stream)
        self._driver.stream_synchronize(stream)
        return kind.from_address(self._pinned).value

    def close(self) -> None:
        if self._pinned is not None:
            self._driver.free_host(self._pinned)
            self._pinned = None
