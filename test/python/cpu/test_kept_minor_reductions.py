"""Row sums whose kept dim is the input's short contiguous one (a complex row
sum as pairs: loops (rows, 2 parts, reduced) over rows x n x 2) read 16 steps
of the reduced dim times the whole kept dim as one contiguous load, transposed
in registers into a kept x 16 accumulator (kept_minor_plan.py,
xla_reduce_kept_minor_3d, xla-flatten-minor-transfers), not 16 reads two
elements apart per part. Each kept index keeps its 16 lanes added in the same
order: the sums are those of the strided plan bit for bit."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.passes.cpu.plans import schedule_plan

LEVELS = ("x86-64-v3", "x86-64-v4")
_TYPES = {"complex<f32>": np.complex64, "complex<f64>": np.complex128, "f32": np.float32, "f64": np.float64}


def _row_sum(element: str, shape: tuple[int, ...]) -> str:
    """The sum over dim 1 of a tensor of ``shape``."""
    t = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    kept = [d for i, d in enumerate(shape) if i != 1]
    out = f"tensor<{'x'.join(map(str, kept))}x{element}>"
    zero = "(0.0, 0.0)" if element.startswith("complex") else "0.0"
    return f"""func.func @main(%a: {t}) -> {out} {{
  %z = stablehlo.constant dense<{zero}> : tensor<{element}>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : ({t}, tensor<{element}>) -> {out}
  return %0 : {out}
}}"""


def _data(element: str, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if element.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(_TYPES[element])


def _accumulators(exe) -> set[str]:
    return set(re.findall(r"iter_args\(%\w+ = %\w+\) -> \((vector<[^>]+>)\)", exe.as_text("bufferized")))


def _loads(exe) -> set[str]:
    """The vector types the kernels load (LLVM dialect)."""
    return set(re.findall(r"llvm\.load %\S+(?: \{[^}]*\})? : !llvm\.ptr -> (vector<[^>]+>)", exe.as_text("llvm")))


# element, shape, the accumulator, the one load of its 16 steps
CASES = [("complex<f64>", (64, 256), "vector<2x16xf64>", "vector<32xf64>"),
         ("complex<f32>", (37, 512), "vector<2x16xf32>", "vector<32xf32>"),
         ("f32", (40, 128, 3), "vector<3x16xf32>", "vector<48xf32>")]


@pytest.mark.parametrize("cpu", LEVELS)
@pytest.mark.parametrize("element,shape,accumulator,load", CASES)
def test_a_short_kept_minor_dim_is_read_with_the_reduced_one(cpu, element, shape, accumulator, load, monkeypatch):
    text = _row_sum(element, shape)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert _accumulators(exe) == {accumulator}, exe.as_text("bufferized")
    assert load in _loads(exe)
    monkeypatch.setattr(schedule_plan, "kept_minor_plan", lambda *_: None)
    strided = xlac.compile(text, cache=False, cpu=cpu)              # the plan before: 16 strided reads
    assert load not in _loads(strided)
    if runnable_levels(cpu):
        x = _data(element, shape, sum(shape))
        got = np.asarray(exe(x))
        assert got.tobytes() == np.asarray(strided(x)).tobytes()    # the same sums, bit for bit
        np.testing.assert_allclose(got, x.sum(1), rtol=1e-4 if "32" in element else 1e-10)


@pytest.mark.parametrize("element,shape", [
    ("complex<f64>", (64, 200)),          # the reduced dim no multiple of 16
    ("f32", (40, 128, 20)),               # the kept dim no shorter than a vector
])
def test_other_row_sums_keep_their_plans(element, shape):
    exe = xlac.compile(_row_sum(element, shape), cache=False, cpu="x86-64-v3")
    assert not any(re.fullmatch(r"vector<\d+x16x\w+>", a) for a in _accumulators(exe))


def test_a_kept_dim_too_wide_for_half_the_registers_keeps_the_strided_plan():
    # f64 x, y, z: 16 x 3 x 8 bytes = 384, over half of AVX2's 16 x 32 bytes
    exe = xlac.compile(_row_sum("f64", (40, 128, 3)), cache=False, cpu="x86-64-v3")
    assert _accumulators(exe) == {"vector<16xf64>"}      # 16 strided reads per coordinate
