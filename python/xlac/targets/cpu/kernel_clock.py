"""The clock a profiled program calls around each kernel (xla-profile-kernels):
two callbacks the JIT resolves ``xlac_profile_enter``/``_exit`` to, and the
times they record."""

from __future__ import annotations

import ctypes
import threading
import time

_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int64)
ENTER, EXIT = "xlac_profile_enter", "xlac_profile_exit"


class KernelClock:
    """Records ``(kernel id, start ns, end ns)`` for every kernel a call runs."""

    def __init__(self, names: list[str]):
        self.names = names
        self.events: list[tuple[int, int, int]] = []
        self._open: dict[int, int] = {}
        self._lock = threading.Lock()
        # kept on the object: the JIT holds raw pointers to them
        self.enter = _CALLBACK(self._enter)
        self.exit = _CALLBACK(self._exit)

    def _enter(self, kernel: int) -> None:
        self._open[kernel] = time.perf_counter_ns()

    def _exit(self, kernel: int) -> None:
        end = time.perf_counter_ns()
        with self._lock:
            self.events.append((kernel, self._open.pop(kernel, end), end))

    def clear(self) -> None:
        with self._lock:
            self.events.clear()

    def register(self, engine) -> None:
        """Define the two symbols in the engine (by their plain names: the
        bindings' ``register_runtime`` would prefix ``_mlir_ciface_``)."""
        engine.raw_register_runtime(ENTER, ctypes.cast(self.enter, ctypes.c_void_p))
        engine.raw_register_runtime(EXIT, ctypes.cast(self.exit, ctypes.c_void_p))
