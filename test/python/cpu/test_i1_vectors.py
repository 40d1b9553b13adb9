"""Bool tensors in vector schedules: a select's predicate, a comparison's
result, bool data itself. xla-i1-memory-as-i8 moves their vectors as bytes
(LLVM would pack a vector of i1 as bits); these check the results against
the StableHLO reference interpreter and that the op was vectorized."""

from __future__ import annotations

import numpy as np
import pytest
from op_class_programs import ROWS, program

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

CASES = [("select", "f32"), ("select", "i8"), ("select", "f64"), ("select", "i1"),
         ("elementwise", "i1"), ("broadcast", "i1"), ("transpose", "i1"), ("concatenate", "i1"),
         ("convert", "i1"), ("gather", "i1"), ("pad", "i1")]


def _inputs(op_class: str, element: str, rng) -> list[np.ndarray]:
    def data():
        if element == "i1":
            return rng.random((ROWS, 128)) < 0.5
        return rng.integers(-50, 50, (ROWS, 128)).astype(np.dtype({"f32": "f4", "f64": "f8", "i8": "i1"}[element]))
    if op_class == "select":
        return [rng.random((ROWS, 128)) < 0.5, data(), data()]
    if op_class in ("elementwise", "concatenate"):
        return [data(), data()]
    if op_class == "broadcast":
        return [rng.random(128) < 0.5]
    if op_class == "gather":
        return [data(), rng.integers(0, ROWS, (64, 1)).astype(np.int32)]
    return [data()]


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("op_class,element", CASES)
def test_bool_vectors_match_the_interpreter(op_class, element, cpu):
    """Every level's code gets the vector schedules (compiled anywhere); it runs where
    the host can run it (AVX-512's masked byte moves on an AVX-512 machine)."""
    text = program(op_class, element)
    inputs = _inputs(op_class, element, np.random.default_rng(0))
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert "not scheduled:" not in exe.fusion_report()
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and scheduled: checked)")
    result = exe(*inputs)
    got = result[0] if isinstance(result, (list, tuple)) else result
    (want,) = shared_server().run(text.encode(), inputs)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert "not scheduled:" not in exe.fusion_report()


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3"])
def test_masked_row_max_reads_its_mask_as_vectors(cpu):
    """A row reduction under an i1 mask: the row schedule reads the mask 16 lanes at a time."""
    from conftest import MASKED_ROW_MAX
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((512, 256)).astype(np.float32), rng.random((512, 256)) < 0.7]
    exe = xlac.compile(MASKED_ROW_MAX, cache=False, cpu=cpu)
    (want,) = shared_server().run(MASKED_ROW_MAX.encode(), inputs)
    np.testing.assert_array_equal(exe(*inputs), want)
    assert "not scheduled:" not in exe.fusion_report()
