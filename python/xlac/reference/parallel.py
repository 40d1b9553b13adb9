"""The reference interpreter running an SPMD program on every device at once.

``eval_module`` has no device grid of its own; the interpreter's
``interpreter.run_parallel`` op runs a grid of programs (replicas x
partitions) in one process, its collectives between threads. So the
per-device program (``xlac.frontend.spmd``) is called from a wrapper
``@main`` through that op, on constant inputs, one list per device, and
its results come back per device: a second oracle for collectives, beside
JAX's own per-device results.

The interpreter runs the devices on LLVM's default thread pool, one thread
per CPU the process may use; with more devices than CPUs the program waits
for a device that never gets a thread until its rendezvous times out. So the
child runs with ``LD_PRELOAD`` of a tiny library (``cpu_count.c``, built with
the system C compiler) that reports enough CPUs to ``sched_getaffinity``.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np

from xlac.errors import CompileError
from xlac.files import built_library

_PRELOAD_SOURCE = Path(__file__).with_name("cpu_count.c")


def run_reference_parallel(data: bytes, inputs: list[list[np.ndarray]], entry: str = "main",
                           timeout: float = 600) -> list[list[np.ndarray]]:
    """The interpreter's results of every device: ``inputs[d]`` are device d's
    (d = replica x num_partitions + partition)."""
    request = pickle.dumps((data, [[np.ascontiguousarray(x) for x in dev] for dev in inputs],
                            entry))
    env = dict(os.environ, REFERENCE_CPU_COUNT=str(max(8, 2 * len(inputs))),
               LD_PRELOAD=_cpu_count_library())
    try:
        done = subprocess.run([sys.executable, "-m", "xlac.reference.parallel"], input=request,
                              capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise CompileError(f"<reference>: error: the parallel reference interpreter took more "
                           f"than {timeout:.0f} s") from None
    if done.returncode != 0 or not done.stdout:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise CompileError(f"<reference>: error: the parallel reference interpreter failed "
                           f"(exit {done.returncode}): {detail[-1] if detail else 'no output'}")
    status, payload = pickle.loads(done.stdout)
    if status != "ok":
        raise CompileError(payload)
    return payload


def _cpu_count_library() -> str:
    """The LD_PRELOAD library, built once per source (CompileError without a C compiler)."""
    try:
        return str(built_library(_PRELOAD_SOURCE))
    except (OSError, ValueError, subprocess.CalledProcessError) as exc:
        raise CompileError(f"<reference>: error: the parallel interpreter cannot build its "
                           f"CPU-count shim: {exc}") from None


def _serve() -> None:
    data, inputs, entry = pickle.loads(sys.stdin.buffer.read())
    try:
        result = ("ok", _evaluate(data, inputs, entry))
    except CompileError as exc:
        result = ("error", exc.diagnostics)
    except Exception as exc:  # noqa: BLE001 - the interpreter's own errors, as a diagnostic
        result = ("error", [f"<reference>: error: {type(exc).__name__}: {exc}"])
    sys.stdout.buffer.write(pickle.dumps(result))


def _evaluate(data: bytes, inputs: list[list[np.ndarray]], entry: str) -> list[list[np.ndarray]]:
    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.mlir import ir, stablehlo
    from xlac.pipeline.pass_manager import run_passes
    from xlac.reference.interpreter import literal
    from xlac.reference.wrap import wrap_parallel_for_interpreter
    from xlac.spmd.grid import declared_grid

    ctx = new_context()
    module = parse_module(ctx, data, "<reference>")
    run_passes(module, [f"xla-select-entry{{entry={entry}}}",
                        "func.func(chlo-legalize-to-stablehlo)", "inline", "symbol-dce"])
    grid = declared_grid(module.operation)
    if len(inputs) != grid.size:
        raise CompileError(f"<reference>: error: {len(inputs)} devices' inputs for a program "
                           f"on {grid}")
    with ctx, ir.Location.unknown():
        from xlac.signature import entry_function_type
        types = [str(t) for t in entry_function_type(module, entry).inputs]
        literals = [[literal(x, t) for x, t in zip(device, types)] for device in inputs]
        module, layout = wrap_parallel_for_interpreter(module, entry, literals, grid)
        results = [np.array(r) for r in stablehlo.eval_module(module, [])]
    count = len(results) // grid.size
    return [layout.unpack(results[d * count:(d + 1) * count]) for d in range(grid.size)]


if __name__ == "__main__":
    _serve()
