"""Largest error of each suite program against numpy (full size) and the
reference interpreter (reduced sizes), with compile times.

    python bench/numerics_report.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "python"))

import xlac  # noqa: E402
from conftest import BENCH_NAMES, SUITE, load_workloads, shrink_program  # noqa: E402
from xlac.reference.interpreter import run_reference  # noqa: E402


def relative_error(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-30)


def main() -> None:
    workloads = load_workloads()
    print(f"{'program':18} {'compile s':>9} {'vs numpy':>10} {'vs interpreter':>15}")
    for name in BENCH_NAMES:
        path = SUITE / f"{name}.stablehlo.mlir"
        start = time.perf_counter()
        exe = xlac.compile(path)
        compile_s = time.perf_counter() - start
        workload = workloads.BY_NAME[name]
        inputs = workloads.make_inputs(workload)
        want = workload["numpy"](*inputs)
        want = want if isinstance(want, tuple) else (want,)
        numpy_err = max(relative_error(g, w) for g, w in zip(exe.run(*inputs), want))
        small = shrink_program(path.read_text())
        small_exe = xlac.compile(small)
        rng = np.random.default_rng(7)
        small_in = [rng.standard_normal(s.shape).astype(s.dtype) for s in small_exe.signature.inputs]
        ref = run_reference(small.encode(), small_in)
        ref_err = max(relative_error(g, w) for g, w in zip(small_exe.run(*small_in), ref))
        print(f"{name:18} {compile_s:9.2f} {numpy_err:10.2e} {ref_err:15.2e}", flush=True)


if __name__ == "__main__":
    main()
