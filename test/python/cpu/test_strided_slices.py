"""A slice that steps along its rows (``x[:, 1::2]``) is a copy out of a
strided view: xla-strided-copy-to-linalg makes it span loads and shuffles
(passes/buffers/strided_row_copy.py) for every element type, bools too,
which had stayed scalar byte loops. Checked at each level's code (compiled
anywhere) and against the StableHLO reference interpreter bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

NUMPY = {"i1": np.bool_, "i8": np.int8, "f16": np.float16, "f32": np.float32}


def _program(element: str, rows: int, cols: int, start: int, step: int) -> str:
    taken = len(range(start, cols, step))
    source, out = f"tensor<{rows}x{cols}x{element}>", f"tensor<{rows}x{taken}x{element}>"
    return (f"func.func @main(%a: {source}) -> {out} {{\n"
            f"  %0 = stablehlo.slice %a [0:{rows}, {start}:{cols}:{step}] : ({source}) -> {out}\n"
            f"  return %0 : {out}\n}}")


def _data(element: str, shape: tuple[int, int]) -> np.ndarray:
    rng = np.random.default_rng(0)
    if element == "i1":
        return rng.random(shape) < 0.5
    return rng.integers(-100, 100, shape).astype(NUMPY[element])


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("element", ["i1", "i8", "f16", "f32"])
def test_strided_slice_is_vector_loads_and_shuffles(element, cpu):
    """Every second element of 256-element rows: the kernel loads vectors
    and shuffles them (no scalar load of one element per iteration)."""
    text = _program(element, 64, 256, 1, 2)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    llvm = exe.as_text("llvm")
    assert "llvm.shufflevector" in llvm
    loads = [line.split("->")[-1].strip() for line in llvm.splitlines() if "llvm.load" in line]
    assert loads and all(kind.startswith("vector<") for kind in loads), loads


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("element,shape,start,step", [
    ("i1", (64, 256), 1, 2), ("i1", (3, 37), 2, 3), ("i8", (5, 130), 0, 4),
    ("f16", (4, 10), 1, 2), ("f32", (7, 9), 0, 2)])
def test_strided_slice_matches_the_interpreter(element, shape, start, step, cpu):
    """Rows whose last block overlaps the one before it, steps 2-4: the same
    bits as the reference interpreter."""
    text = _program(element, *shape, start, step)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert "llvm.shufflevector" in exe.as_text("llvm")
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and vectorized: checked)")
    data = _data(element, shape)
    got = np.asarray(exe(data))
    (want,) = shared_server().run(text.encode(), [data])
    assert got.shape == want.shape and got.tobytes() == np.ascontiguousarray(want).tobytes()
