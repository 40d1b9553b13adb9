"""The StableHLO reference interpreter as a numerics oracle.

``eval_module`` aborts the whole process on some inputs (complex results,
rng, custom calls), so it always runs in a child process:
``run_reference`` pickles the program and inputs to ``python -m
xlac.reference.interpreter`` and reads the results back.

Results are bitcast to integers inside the program (complex split into real
and imaginary parts) because the bindings cannot turn every element type
into a numpy array; they are viewed back as the right dtype here.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np

from xlac.errors import CompileError

_BITS = {"f16": "i16", "bf16": "i16", "f32": "i32", "f64": "i64"}


def run_reference(data: bytes, inputs: list[np.ndarray], entry: str = "main",
                  timeout: float = 600) -> list[np.ndarray]:
    """The interpreter's results for ``entry`` of program ``data``."""
    request = pickle.dumps((data, [np.ascontiguousarray(x) for x in inputs], entry))
    try:
        done = subprocess.run([sys.executable, "-m", "xlac.reference.interpreter"], input=request,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CompileError(f"<reference>: error: the reference interpreter took more than "
                           f"{timeout:.0f} s", "try smaller inputs") from None
    if done.returncode != 0 or not done.stdout:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise CompileError(f"<reference>: error: the reference interpreter failed "
                           f"(exit {done.returncode}): {detail[-1] if detail else 'no output'}")
    status, payload = pickle.loads(done.stdout)
    if status != "ok":
        raise CompileError(payload)
    return payload


def _serve() -> None:
    sys.stdout.buffer.write(evaluate_request(sys.stdin.buffer.read()))


def evaluate_request(request: bytes) -> bytes:
    """One pickled (program, inputs, entry) in, one pickled (status, payload) out.

    Shared with the long-lived child of ``xlac.reference.server``.
    """
    data, inputs, entry = pickle.loads(request)
    try:
        result = ("ok", _evaluate(data, inputs, entry))
    except CompileError as exc:
        result = ("error", exc.diagnostics)
    except Exception as exc:  # noqa: BLE001 - the interpreter's own errors, as a diagnostic
        result = ("error", [f"<reference>: error: {type(exc).__name__}: {exc}"])
    return pickle.dumps(result)


def _evaluate(data: bytes, inputs: list[np.ndarray], entry: str) -> list[np.ndarray]:
    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.mlir import ir, stablehlo
    from xlac.pipeline.pass_manager import run_passes
    from xlac.reference.wrap import wrap_for_interpreter

    ctx = new_context()
    module = parse_module(ctx, data, "<reference>")
    run_passes(module, [f"xla-select-entry{{entry={entry}}}",
                        "func.func(chlo-legalize-to-stablehlo)", "inline", "symbol-dce"])
    with ctx, ir.Location.unknown():
        types = [str(t) for t in _entry_input_types(module, entry)]
        literals = [literal(x, t) for x, t in zip(inputs, types)]
        module, layout = wrap_for_interpreter(module, entry, literals)
        results = stablehlo.eval_module(module, [])
    return layout.unpack([np.array(r) for r in results])


def _entry_input_types(module, entry: str):
    from xlac.signature import entry_function_type
    return entry_function_type(module, entry).inputs


def literal(array: np.ndarray, mlir_type: str) -> str:
    raw = array.astype(np.uint8).tobytes() if array.dtype == np.bool_ else array.tobytes()
    return f'dense<"0x{raw.hex().upper()}"> : {mlir_type}'


if __name__ == "__main__":
    _serve()
