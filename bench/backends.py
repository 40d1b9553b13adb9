"""The three backends behind one small interface.

Each backend: ``load(program, inputs) -> compile seconds``, ``outputs() -> (arrays,
seconds)`` for the first call, ``time(k) -> [seconds] * k``, ``unload()``, ``close()``.
Every failure comes out as ``BackendError`` so that the harness reports it and goes on.
"""

from __future__ import annotations

import multiprocessing
import time
from contextlib import contextmanager

import numpy as np
from numpy_impls import IMPLS
from workers import xlac_worker


class BackendError(Exception):
    """A backend could not compile or run a program (the message says why)."""


@contextmanager
def reported(what: str):
    try:
        yield
    except BackendError:
        raise
    except Exception as exc:  # noqa: BLE001 - the backend's own words go into the report
        raise BackendError(f"{what}: {type(exc).__name__}: {str(exc).strip()[:400]}") from None


class XlaBackend:
    """XLA through jaxlib's CPU client, the client and compile options ``jax.jit`` uses.

    Both compilers get the same StableHLO text: jax.jit would lower its own, so the
    text goes straight to ``Client.compile_and_load``. Inputs live on the device before
    timing, and every timed call waits for its outputs (``block_until_ready``).
    """

    name = "XLA"
    method = "jaxlib CPU client: compile_and_load(StableHLO text) with jax.jit's compile options"

    def __init__(self):
        with reported("XLA does not start"):
            from jax._src import compiler
            from jax._src.lib import xla_client
            from jax.extend.backend import get_backend
            self._client = get_backend("cpu")
            self._device = self._client.local_devices()[0]
            self._devices = xla_client.DeviceList((self._device,))
            self._options = compiler.get_compile_options(
                num_replicas=1, num_partitions=1, backend=self._client)
            self._compile(xlac_worker.TINY_PROGRAM)   # one-time start-up stays out of compile times
        self.version = __import__("jax").__version__
        self.flops = None
        self.unload()

    def supports(self, program) -> bool:
        return True

    def _compile(self, source):
        return self._client.compile_and_load(source, self._devices, self._options)

    def load(self, program, inputs) -> float:
        import jax
        with reported("XLA compile"):
            start = time.perf_counter()
            self._exe = self._compile(program.source())
            seconds = time.perf_counter() - start
            self.flops = _cost_flops(self._exe)
            self._args = device_put(inputs, self._device)
            jax.block_until_ready(self._args)
        return seconds

    def _call(self):
        outputs = self._exe.execute(self._args)
        for out in outputs:
            out.block_until_ready()
        return outputs

    def outputs(self):
        with reported("XLA run"):
            start = time.perf_counter()
            outputs = self._call()
            seconds = time.perf_counter() - start
            return [np.asarray(o) for o in outputs], seconds

    def time(self, count: int) -> list[float]:
        with reported("XLA run"):
            return _timed(self._call, count)

    def unload(self):
        self._exe, self._args, self.flops = None, None, None

    def close(self):
        self.unload()


def device_put(arrays, device) -> list:
    """The arrays on ``device`` with their own dtypes: jax would make int64 (torch's token
    ids) int32 and float64 float32 unless 64-bit types are on."""
    import jax
    with jax.enable_x64(True):
        return [jax.device_put(a, device) for a in arrays]


def _cost_flops(exe) -> float | None:
    try:
        analysis = exe.cost_analysis()
        analysis = analysis[0] if isinstance(analysis, list) else analysis
        return float(analysis["flops"])
    except Exception:  # noqa: BLE001 - cost analysis is optional
        return None


class NumpyBackend:
    """What a user would write by hand: numpy_impls, on the same input arrays."""

    name = "numpy"

    def __init__(self):
        self.version = np.__version__
        self._fn = None

    def supports(self, program) -> bool:
        return program.in_suite and program.name in IMPLS

    def load(self, program, inputs) -> None:
        self._fn, self._args = IMPLS[program.name], inputs   # nothing to compile

    def _call(self):
        result = self._fn(*self._args)
        return list(result) if isinstance(result, tuple) else [result]

    def outputs(self):
        with reported("numpy"):
            start = time.perf_counter()
            outputs = self._call()
            return [np.asarray(o) for o in outputs], time.perf_counter() - start

    def time(self, count: int) -> list[float]:
        with reported("numpy"):
            return _timed(self._call, count)

    def unload(self):
        self._fn, self._args = None, None

    def close(self):
        self.unload()


class XlacBackend:
    """xlac in a worker process (see workers/xlac_worker.py); it makes its own copy of the inputs."""

    name = "xlac"
    worker = staticmethod(xlac_worker.serve)

    def __init__(self, seed: int, call_limit_s: float, start_limit_s: float = 180.0):
        self._seed, self._call_limit = seed, call_limit_s
        self._start_limit = start_limit_s
        self._process = self._conn = None
        self.version = None

    def supports(self, program) -> bool:
        return True

    def load(self, program, inputs) -> float:
        return self._ask(("load", program, self._seed), self._call_limit, "xlac compile")

    def outputs(self):
        return self._ask(("outputs",), self._call_limit, "xlac run")

    def time(self, count: int) -> list[float]:
        return self._ask(("time", count), count * self._call_limit, "xlac run")

    def profile(self, runs: int, top: int, trace: str | None):
        """Per-kernel times of the loaded program (kernels.KernelProfile)."""
        return self._ask(("profile", runs, top, trace), (runs + 2) * self._call_limit,
                         "xlac profile")

    def unload(self):
        pass   # the next load replaces the worker's program

    def close(self):
        if self._process is not None and self._process.is_alive():
            self._conn.send(("quit",))
            self._process.join(5)
        self._kill()

    def _ask(self, request: tuple, limit_s: float, what: str):
        self._start()
        self._conn.send(request)
        return self._reply(limit_s, what)

    def _start(self):
        if self._process is not None:
            return
        context = multiprocessing.get_context("spawn")   # no fork of a process holding XLA or CUDA
        self._conn, child = context.Pipe()
        self._process = context.Process(target=self.worker, args=(child,), daemon=True)
        self._process.start()
        child.close()
        try:
            self.version = self._reply(self._start_limit, "xlac worker start")
        except BackendError:
            self._kill()                     # a worker that did not start is not reused
            raise

    def _reply(self, limit_s: float, what: str):
        if not self._conn.poll(limit_s):
            self._kill()
            raise BackendError(f"{what}: no answer within {limit_s:.0f} s (worker killed)")
        try:
            status, value = self._conn.recv()
        except (EOFError, ConnectionError):
            code = self._kill()
            raise BackendError(f"{what}: the worker died (exit code {code})") from None
        if status == "error":
            raise BackendError(f"{what}: {value}")
        return value

    def _kill(self):
        process, self._process = self._process, None
        if process is None:
            return None
        if process.is_alive():
            process.kill()
        process.join(5)
        self._conn.close()
        return process.exitcode


def _timed(call, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times
