"""xlac_worker's protocol with every program compiled for target="cuda".

``serve``: a call is then a user's call: host numpy in, numpy out (copies to and from the GPU
included). ``serve_resident`` (``run.py --gpu-sized``): the inputs are put on the device once
(``xlac.device_put``), a call is ``exe(*device_arrays)`` waited for with
``block_until_ready``, and its results stay on the device: what XLA's column times too.
"""

from __future__ import annotations

import time

import numpy as np
from workers import xlac_worker


def serve(conn) -> None:
    """xlac_worker.serve for the GPU (a module-level function: the spawned worker's target)."""
    xlac_worker.serve(conn, "cuda")


def serve_resident(conn) -> None:
    """xlac_worker.serve for the GPU, inputs and results on the device."""
    xlac_worker.serve(conn, "cuda", RESIDENT)


def _load(compiler, state: dict, program, seed: int) -> float:
    import xlac
    seconds = xlac_worker.HANDLERS["load"](compiler, state, program, seed)   # compiles, host inputs
    host = state.pop("inputs")
    state["inputs"] = [xlac.device_put(array) for array in host]
    for array in state["inputs"]:
        array.block_until_ready()
    return seconds


def _call(state: dict) -> tuple:
    """One call on the device arrays, waited for; its results, still on the device."""
    results = state["exe"](*state["inputs"])
    results = results if isinstance(results, tuple) else (results,)
    for result in results:
        result.block_until_ready()
    return results


def _outputs(compiler, state: dict):
    start = time.perf_counter()
    results = _call(state)
    seconds = time.perf_counter() - start
    return [np.asarray(result) for result in results], seconds


def _time(compiler, state: dict, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        _call(state)
        times.append(time.perf_counter() - start)
    return times


RESIDENT = {**xlac_worker.HANDLERS, "load": _load, "outputs": _outputs, "time": _time}
