"""f32 sine and cosine as xla-approximate-math's polynomials (approximate_trig.py),
and the c64 exponential on its parts' pairs that uses them, against numpy in f64."""

from __future__ import annotations

import numpy as np
import pytest

import xlac


def _unary(op: str, element: str, size: int) -> str:
    source = f"tensor<{size}x{element}>"
    return (f"func.func @main(%x: {source}) -> {source} {{\n"
            f"  %0 = {op} %x : {source}\n  return %0 : {source}\n}}")


def _spacings(got: np.ndarray, want: np.ndarray) -> float:
    """The largest error in units of the f32 spacing at the f64 value."""
    scale = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - want) / scale))


@pytest.mark.parametrize("cpu", ["x86-64-v3", "host"])
@pytest.mark.parametrize(("op", "reference"), [("stablehlo.sine", np.sin), ("stablehlo.cosine", np.cos)])
def test_sine_and_cosine_are_vector_polynomials_within_2_ulp(op, reference, cpu):
    """No sinf/cosf call per lane: within 2 ulp (measured 1.53) of float64's over
    small, reduced (up to 8192, multiples of pi/2 included) and libm's ranges
    (beyond 8192, inf, NaN); sin keeps -0."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-10, 10, 20000), rng.uniform(-8192, 8192, 20000),
                        rng.uniform(-1e6, 1e6, 2000), rng.standard_normal(2000) * 1e-20,
                        np.float32(np.pi / 2) * np.arange(-3000, 3000, 7),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 8191.99, 8192.0, 8192.01, 3e38]]
                       ).astype(np.float32)
    exe = xlac.compile(_unary(op, "f32", x.size), cpu=cpu, cache=False)
    llvm = exe.as_text("llvm")
    assert "llvm.intr.roundeven" in llvm or "roundeven" in llvm
    got = np.asarray(exe(x))
    with np.errstate(invalid="ignore"):
        want = reference(x.astype(np.float64))
    finite = np.isfinite(want)
    assert _spacings(got[finite], want[finite]) <= 2
    assert np.isnan(got[~finite]).all()
    if op == "stablehlo.sine":
        assert np.signbit(got[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()


@pytest.mark.parametrize("cpu", ["x86-64-v3", "host"])
def test_c64_exp_runs_on_its_parts_as_the_complex_loop_gives_it(cpu):
    """exp of c64 goes as f32 pairs (no complex element left in the kernels), with
    convert-complex-to-standard's special forms: exp(a) overflowing as exp(a/2)
    twice, a zero imaginary part kept +0 (not inf * 0)."""
    rng = np.random.default_rng(7)
    n = 4096
    x = (rng.standard_normal(n) * 3 + 1j * rng.standard_normal(n) * 10).astype(np.complex64)
    x[:5] = [0, 1000, complex(-1000, 2), complex(88.8, 2.5), complex(0, 1e4)]
    c64 = f"tensor<{n}xcomplex<f32>>"
    text = (f"func.func @main(%x: {c64}) -> ({c64}, {c64}) {{\n"
            f"  %0 = stablehlo.exponential %x : {c64}\n"
            f"  %1 = stablehlo.multiply %0, %x : {c64}\n"
            f"  return %0, %1 : {c64}, {c64}\n}}")
    exe = xlac.compile(text, cpu=cpu, cache=False)
    assert "complex<f32>" not in exe.as_text("linalg").split("func.func")[-1]
    exp, product = (np.asarray(v) for v in exe(x))
    assert exp[0] == 1 and exp[1].real == np.inf and exp[1].imag == 0 and not np.signbit(exp[1].imag)
    assert np.isfinite(exp[3])
    with np.errstate(over="ignore", invalid="ignore"):
        wide = np.exp(x.astype(np.complex128))
    for got, want in ((exp, wide), (product, wide * x.astype(np.complex128))):
        finite = np.isfinite(want) & (np.arange(n) >= 5)
        assert (np.abs(got[finite] - want[finite]) / np.abs(want[finite])).max() < 2e-6
