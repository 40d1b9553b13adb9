"""bf16 rows whose length the vector does not divide, at the AVX2 level: the
whole vectors move unmasked and only each row's tail is masked (AVX2 has no
masked 16-bit moves: LLVM splits a masked one into a branch and a scalar
move per lane), and jax's bf16 softmax is scheduled whole. The code is
inspected as compiled for x86-64-v3, whatever this machine is; results are
run only at the levels it has."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

BF16 = ml_dtypes.bfloat16
ROWS = "tensor<24x630xbf16>"          # 630 = 19 x 32 + 22: a partial vector per row
ELEMENTWISE = (f"func.func @main(%x: {ROWS}, %y: {ROWS}) -> {ROWS} {{\n"
               f"  %0 = stablehlo.tanh %x : {ROWS}\n  %1 = stablehlo.add %0, %y : {ROWS}\n"
               f"  return %1 : {ROWS}\n}}")
# jax.jit(jax.nn.softmax) of a bf16 [24, 630]: max in bf16, exp in bf16, sum in f32
SOFTMAX = """func.func @main(%x: tensor<24x630xbf16>) -> tensor<24x630xbf16> {
  %ninf = stablehlo.constant dense<0xFF80> : tensor<bf16>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<24x630xbf16>, tensor<bf16>) -> tensor<24xbf16>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<24xbf16>) -> tensor<24x630xbf16>
  %d = stablehlo.subtract %x, %mb : tensor<24x630xbf16>
  %e = stablehlo.exponential %d : tensor<24x630xbf16>
  %ef = stablehlo.convert %e : (tensor<24x630xbf16>) -> tensor<24x630xf32>
  %s = stablehlo.reduce(%ef init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<24x630xf32>, tensor<f32>) -> tensor<24xf32>
  %sh = stablehlo.convert %s : (tensor<24xf32>) -> tensor<24xbf16>
  %sb = stablehlo.broadcast_in_dim %sh, dims = [0] : (tensor<24xbf16>) -> tensor<24x630xbf16>
  %r = stablehlo.divide %e, %sb : tensor<24x630xbf16>
  return %r : tensor<24x630xbf16>
}"""
ROW_MAX = """func.func @main(%x: tensor<24x630xbf16>) -> tensor<24xbf16> {
  %ninf = stablehlo.constant dense<0xFF80> : tensor<bf16>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<24x630xbf16>, tensor<bf16>) -> tensor<24xbf16>
  return %m : tensor<24xbf16>
}"""
PLAIN = re.compile(r"llvm\.(load %\S+|store %\S+, %\S+) \{[^}]*\} : (!llvm\.ptr -> )?vector<\d+xi16>")
MASKED = re.compile(r"llvm\.intr\.masked\.(load|store)\b.*vector<\d+xi16>")
LIBCALL = re.compile(r"__truncsfbf2|__extendbfsf2|@tanhf|@expf")


def _llvm(text: str, cpu: str) -> str:
    return xlac.compile(text, cpu=cpu, cache=False).as_text("llvm")


@pytest.mark.parametrize("program", [ELEMENTWISE, SOFTMAX], ids=["tanh_add", "softmax"])
def test_avx2_moves_whole_bf16_vectors_unmasked(program):
    code = _llvm(program, "x86-64-v3")
    plain, masked = len(PLAIN.findall(code)), len(MASKED.findall(code))
    assert plain > 0 and masked <= plain, (plain, masked)
    assert not LIBCALL.search(code)


def test_avx2_bf16_row_max_steps_whole_vectors_then_the_tail():
    # 630 = 39 x 16 + 6: the 16-lane steps end at 624, unmasked; before, one loop to 630 masked each step
    code = xlac.compile(ROW_MAX, cpu="x86-64-v3", cache=False).as_text("bufferized")
    assert re.search(r"scf\.for %\w+ = %c0 to %c624 step %c16 ", code), code


def test_bf16_softmax_is_scheduled_at_avx2():
    # the shape and threads of the bench's case: its row group failed to vectorize (bf16 members)
    program = SOFTMAX.replace("24x630", "420x1260").replace("<24x", "<420x")
    options = xlac.Options.from_env().replace(num_threads=2)
    report = xlac.compile(program, cpu="x86-64-v3", cache=False, options=options).fusion_report()
    assert "not scheduled" not in report, report


def _inputs(count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    arrays = [(rng.standard_normal((24, 630)) * 3).astype(BF16) for _ in range(count)]
    arrays[0].flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return arrays


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("program, arity", [(ELEMENTWISE, 2), (ROW_MAX, 1)], ids=["tanh_add", "row_max"])
def test_peeled_tails_match_the_interpreter_bit_for_bit(program, arity, cpu):
    args = _inputs(arity)
    got = xlac.compile(program, cpu=cpu, cache=False)(*args)
    (want,) = shared_server().run(program.encode(), args)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_bf16_softmax_matches_the_interpreter(cpu):
    args = _inputs(1)
    args[0].flat[:4] = 0.5                 # a row with inf is NaN in both: keep the rows finite
    got = xlac.compile(SOFTMAX, cpu=cpu, cache=False)(*args).astype(np.float32)
    (want,) = shared_server().run(SOFTMAX.encode(), args)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=2 ** -7, atol=1e-6)


F32_ROWS = """func.func @main(%x: tensor<24x630xf32>, %y: tensor<24x630xf32>) -> (tensor<24x630xf32>, tensor<24xf32>) {
  %e = stablehlo.exponential %x : tensor<24x630xf32>
  %r = stablehlo.round_nearest_even %y : tensor<24x630xf32>
  %a = stablehlo.add %e, %r : tensor<24x630xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<24x630xf32>, tensor<f32>) -> tensor<24xf32>
  return %a, %s : tensor<24x630xf32>, tensor<24xf32>
}"""
PLAIN_F32 = re.compile(r"llvm\.(load %\S+|store %\S+, %\S+) \{[^}]*\} : (!llvm\.ptr -> )?vector<\d+xf32>")
MASKED_F32 = re.compile(r"llvm\.intr\.masked\.(load|store)\b.*vector<\d+xf32>")


def test_avx2_moves_whole_f32_vectors_unmasked():
    """f32 too (vmaskmovps's stores are microcoded on AMD's cores): the rows'
    whole vectors plain loads and stores, a masked move only in the tails."""
    code = _llvm(F32_ROWS, "x86-64-v3")
    plain, masked = len(PLAIN_F32.findall(code)), len(MASKED_F32.findall(code))
    assert plain > 0 and masked <= plain, (plain, masked)


def test_peeled_f32_tails_keep_the_numbers():
    """Peeled at x86-64-v3, the same numbers as x86-64-v4's masked steps (bit
    for bit where the host runs both) and close to numpy."""
    rng = np.random.default_rng(3)
    x, y = ((rng.standard_normal((24, 630)) * 3).astype(np.float32) for _ in range(2))
    x.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    got = [np.asarray(v) for v in xlac.compile(F32_ROWS, cpu="x86-64-v3", cache=False)(x, y)]
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_allclose(got[0], np.exp(x) + np.round(y), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1], y.sum(1, dtype=np.float64), rtol=1e-5, atol=1e-4)
    if "x86-64-v4" in runnable_levels("x86-64-v4"):
        wide = xlac.compile(F32_ROWS, cpu="x86-64-v4", cache=False)(x, y)
        for g, w in zip(got, wide):
            np.testing.assert_array_equal(g.view(np.uint32), np.asarray(w).view(np.uint32))


def _whole_sum(element: str, n: int) -> str:
    zero = "0" if element.startswith("i") else "0.0"
    return f"""func.func @main(%a: tensor<{n}x{element}>) -> tensor<{element}> {{
  %z = stablehlo.constant dense<{zero}> : tensor<{element}>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<{n}x{element}>, tensor<{element}>) -> tensor<{element}>
  return %0 : tensor<{element}>
}}"""


def test_avx2_whole_i16_sum_steps_whole_vectors():
    """A 1-D sum split into 32 rows of 16375 (xla_reduce_1d): each row's
    whole 16-lane steps unmasked, its tail peeled (xla_reduce_1d_peeled)."""
    code = _llvm(_whole_sum("i16", 32 * 16375), "x86-64-v3")
    plain, masked = len(PLAIN.findall(code)), len(MASKED.findall(code))
    assert plain > 0 and masked <= plain, (plain, masked)


@pytest.mark.parametrize("element", ["i16", "f32"])
def test_peeled_whole_sums_keep_the_numbers(element):
    n = 32 * 1001
    rng = np.random.default_rng(5)
    if element == "i16":
        x = rng.integers(-300, 300, n).astype(np.int16)
        got = xlac.compile(_whole_sum(element, n), cpu="x86-64-v3", cache=False)(x)
        assert int(np.asarray(got)) == int(x.sum(dtype=np.int16))      # wraps as i16
        return
    x = rng.standard_normal(n).astype(np.float32)
    got = np.asarray(xlac.compile(_whole_sum(element, n), cpu="x86-64-v3", cache=False)(x))
    np.testing.assert_allclose(got, x.sum(dtype=np.float64), rtol=1e-5, atol=1e-3)
    if "x86-64-v4" in runnable_levels("x86-64-v4"):              # masked steps there: the same lanes
        wide = np.asarray(xlac.compile(_whole_sum(element, n), cpu="x86-64-v4", cache=False)(x))
        assert got.tobytes() == wide.tobytes()
