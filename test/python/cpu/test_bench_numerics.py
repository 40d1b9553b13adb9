"""The ten benchmark programs: xlac against numpy at full size, and against
the StableHLO reference interpreter at reduced sizes."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import BENCH_NAMES, SUITE, require_shared, shrink_program
from xlac.reference.interpreter import run_reference

# fp32 programs with reductions over up to 16M terms: errors relative to the
# largest magnitude of the reference result.
NUMPY_RTOL = 2e-4
REFERENCE_RTOL = 1e-5
# The interpreter adds reduce_sum's 1M f32 terms one after another: its own
# error is ~2e-5 of the sum (xlac's vectorized partial sums are ~5e-7 off).
REFERENCE_RTOL_OF = {"reduce_sum": 1e-4}


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-30)
    return float(np.max(np.abs(got - want), initial=0.0)) / scale


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.parametrize("name", BENCH_NAMES)
def test_full_size_against_numpy(name, workloads):
    require_shared("bench", "suite", f"{name}.stablehlo.mlir")
    workload = workloads.BY_NAME[name]
    inputs = workloads.make_inputs(workload)
    expected = workload["numpy"](*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    exe = xlac.compile(SUITE / f"{name}.stablehlo.mlir")
    got = exe.run(*inputs)
    assert len(got) == len(expected)
    for out, want in zip(got, expected):
        assert out.shape == np.shape(want)
        assert relative_error(out, want) < NUMPY_RTOL, name


@pytest.mark.parametrize("name", BENCH_NAMES)
def test_reduced_size_against_interpreter(name):
    path = require_shared("bench", "suite", f"{name}.stablehlo.mlir")
    text = shrink_program(path.read_text())
    exe = xlac.compile(text)
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(spec.shape).astype(spec.dtype) for spec in exe.signature.inputs]
    expected = run_reference(text.encode(), inputs)
    got = exe.run(*inputs)
    for out, want in zip(got, expected):
        assert relative_error(out, want) < REFERENCE_RTOL_OF.get(name, REFERENCE_RTOL), name


@pytest.mark.parametrize("form", ["stablehlo.mlir", "generic.mlir", "vhlo.mlirbc"])
def test_all_three_forms_agree(form):
    path = require_shared("bench", "suite", f"softmax.{form}")
    exe = xlac.compile(path)
    x = np.random.default_rng(1).standard_normal((4096, 1024)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert relative_error(exe(x), e / e.sum(axis=1, keepdims=True)) < 1e-5
