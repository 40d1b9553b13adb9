"""The xlac side of the benchmark, in its own process.

Why a process: a call into xlac's JIT-compiled code cannot be interrupted, may crash the
process, and loads torch-mlir's MLIR next to jaxlib's. Here a hang is ended by killing
the worker and a crash is an EOF on the pipe; the harness reports both and goes on.

Protocol (pickled tuples over a multiprocessing Connection; every request gets one
reply, ("ok", value) or ("error", message)):
  ("load", program, seed)  -> compile seconds     (compiles and makes the inputs)
  ("outputs",)             -> (arrays, seconds)  (one call, results kept for the check)
  ("time", k)              -> [seconds] * k      (k calls, each timed)
  ("profile", runs, top, trace)  -> kernels.KernelProfile  (exe.profile: a profiled copy,
                              ``runs`` calls; the ``top`` slowest kernels; a Chrome trace
                              written to the path ``trace`` unless it is None)
  ("quit",)                -> the worker exits
"""

from __future__ import annotations

import time
import traceback

from kernels import summarize
from programs import make_inputs

TINY_PROGRAM = ("func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
         "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")


def serve(conn, target: str = "cpu", handlers: dict | None = None) -> None:
    """Answer requests until told to quit or the pipe closes; programs compile for ``target``
    (``handlers``: other ways to load, call and time them than the host-array ones below)."""
    try:
        import xlac
        compiler = xlac if target == "cpu" else _ForTarget(xlac, target)
        # one-time start-up costs stay out of the first compile time
        tiny = compiler.compile(TINY_PROGRAM, cache=False)
    except Exception as exc:  # noqa: BLE001 - reported to the harness, which goes on
        conn.send(("error", f"xlac on {target} does not start: {_describe(exc)}"))
        return
    if target != "cpu":
        _first_run(tiny)
    conn.send(("ok", xlac.__version__))
    state: dict = {}
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request[0] == "quit":
            return
        conn.send(_answer(compiler, state, request, handlers or HANDLERS))


class _ForTarget:
    """The bits of the xlac module this worker uses, compiling for another target."""

    def __init__(self, xlac, target: str):
        self._xlac, self._target = xlac, target
        self.__version__ = xlac.__version__

    def compile(self, source, **options):
        return self._xlac.compile(source, target=self._target, **options)


def _first_run(tiny) -> None:
    """Driver start-up (cuInit, the first module load) stays out of the timings."""
    import numpy as np
    try:
        tiny.run(np.ones(4, np.float32))
    except Exception:  # noqa: BLE001 - no GPU: every program's first call reports it
        pass


def _answer(xlac, state: dict, request: tuple, handlers: dict) -> tuple:
    try:
        return ("ok", handlers[request[0]](xlac, state, *request[1:]))
    except Exception as exc:  # noqa: BLE001 - a failing program must not end the run
        return ("error", _describe(exc))


def _load(xlac, state: dict, program, seed: int) -> float:
    state.clear()
    source = program.source()
    start = time.perf_counter()
    # cold compile time: the persistent cache would report a hit instead
    state["exe"] = xlac.compile(source, cache=False)
    seconds = time.perf_counter() - start
    state["inputs"] = make_inputs(program, seed)
    state["program"] = program
    return seconds


def _outputs(xlac, state: dict):
    start = time.perf_counter()
    arrays = state["exe"].run(*state["inputs"])
    return arrays, time.perf_counter() - start


def _time(xlac, state: dict, count: int) -> list[float]:
    exe, inputs, times = state["exe"], state["inputs"], []
    for _ in range(count):
        start = time.perf_counter()
        exe.run(*inputs)
        times.append(time.perf_counter() - start)
    return times


def _profile(xlac, state: dict, runs: int, top: int, trace: str | None):
    start = time.perf_counter()
    profile = state["exe"].profile(*state["inputs"], runs=runs)
    seconds = time.perf_counter() - start
    program = state["program"]
    return summarize(profile, program.source(), top, trace, seconds, f"xlac: {program.name}")


HANDLERS = {"load": _load, "outputs": _outputs, "time": _time, "profile": _profile}


def _describe(exc: BaseException) -> str:
    """The error's own words, without a traceback unless it is an internal bug."""
    if type(exc).__module__.startswith("xlac"):
        return f"{type(exc).__name__}: {exc}"
    last = traceback.format_exception(exc)[-3:]
    return f"{type(exc).__name__}: {exc} ({''.join(last).strip()[-300:]})"
