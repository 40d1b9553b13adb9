"""Independent kernels run as one launch (xla-gpu-horizontal-launches): an Adam
update of several parameters (a kernel per moment and per parameter before), a
matmul's tiles beside a transpose's and a row sum's blocks; fewer launches than
with the pass disabled, PTX through ptxas, and the cpu target's values through
the SIMT emulator."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.targets.cuda.ptx import ptxas
from xlac_emulator.simt import run_emulated

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

PASS = "xla-gpu-horizontal-launches"


def _adam(shapes: list[str]) -> str:
    """m' = 0.9 m + 0.1 g, v' = 0.999 v + 0.001 g^2, p' = p - 0.01 m' / (sqrt(v') + 1e-8)
    for each parameter (p, g, m, v); returns every p', m', v'."""
    args, lines, results = [], [], []
    for i, shape in enumerate(shapes):
        t = f"tensor<{shape}xf32>"
        args += [f"%p{i}: {t}", f"%g{i}: {t}", f"%m{i}: {t}", f"%v{i}: {t}"]
        lines += [f"%{name}{i} = stablehlo.constant dense<{value}> : {t}"
                  for name, value in (("b1", 0.9), ("c1", 0.1), ("b2", 0.999), ("c2", 0.001),
                                      ("lr", 0.01), ("eps", "1.0e-8"))]
        lines += [f"%ma{i} = stablehlo.multiply %b1{i}, %m{i} : {t}",
                  f"%mb{i} = stablehlo.multiply %c1{i}, %g{i} : {t}",
                  f"%mn{i} = stablehlo.add %ma{i}, %mb{i} : {t}",
                  f"%gg{i} = stablehlo.multiply %g{i}, %g{i} : {t}",
                  f"%va{i} = stablehlo.multiply %b2{i}, %v{i} : {t}",
                  f"%vb{i} = stablehlo.multiply %c2{i}, %gg{i} : {t}",
                  f"%vn{i} = stablehlo.add %va{i}, %vb{i} : {t}",
                  f"%sq{i} = stablehlo.sqrt %vn{i} : {t}",
                  f"%de{i} = stablehlo.add %sq{i}, %eps{i} : {t}",
                  f"%st{i} = stablehlo.divide %mn{i}, %de{i} : {t}",
                  f"%sc{i} = stablehlo.multiply %lr{i}, %st{i} : {t}",
                  f"%pn{i} = stablehlo.subtract %p{i}, %sc{i} : {t}"]
        results += [(f"%pn{i}", t), (f"%mn{i}", t), (f"%vn{i}", t)]
    return (f"func.func @main({', '.join(args)}) -> ({', '.join(t for _, t in results)}) {{\n  "
            + "\n  ".join(lines) + f"\n  return {', '.join(v for v, _ in results)} : "
            + ", ".join(t for _, t in results) + "\n}")


ADAM_SHAPES = ["32", "3x3x1x32", "64", "10", "256x10"]

# a matmul (16x16-thread tiles), a transpose (32x8-thread tiles) and a row sum
# (256-thread blocks, shared memory) on unrelated inputs
MIXED = """
func.func @main(%a: tensor<64x48xf32>, %b: tensor<48x32xf32>, %t: tensor<40x72xf32>,
                %r: tensor<16x4096xf32>) -> (tensor<64x32xf32>, tensor<72x40xf32>, tensor<16xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x48xf32>, tensor<48x32xf32>) -> tensor<64x32xf32>
  %tt = stablehlo.transpose %t, dims = [1, 0] : (tensor<40x72xf32>) -> tensor<72x40xf32>
  %s = stablehlo.reduce(%r init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x4096xf32>, tensor<f32>) -> tensor<16xf32>
  return %d, %tt, %s : tensor<64x32xf32>, tensor<72x40xf32>, tensor<16xf32>
}"""
MIXED_SHAPES = [(64, 48), (48, 32), (40, 72), (16, 4096)]


def _compiled(program: str, disable=()):
    options = xlac.Options.from_env().replace(cuda_contractions="generated", cache_dir="",
                                              disable_passes=disable)
    return xlac.compile(program, target="cuda", options=options)


def _launches(exe) -> int:
    return exe.as_text("gpu").count("gpu.launch_func")


def _adam_inputs(rng) -> list[np.ndarray]:
    arrays = []
    for shape in ADAM_SHAPES:
        dims = tuple(int(n) for n in shape.split("x"))
        p, g, m = (rng.standard_normal(dims).astype(np.float32) for _ in range(3))
        arrays += [p, g, m, np.abs(rng.standard_normal(dims)).astype(np.float32)]
    return arrays


def test_adam_updates_of_all_parameters_are_two_launches():
    program = _adam(ADAM_SHAPES)
    exe, apart = _compiled(program), _compiled(program, (PASS,))
    # without the pass three kernels a parameter (m', v' and p': the moments are
    # results too, so elementwise fusion leaves them producers of their own);
    # with it every moment is one launch and every parameter the next
    assert _launches(apart) == 3 * len(ADAM_SHAPES)
    assert _launches(exe) == 2
    ptxas(exe.as_text("ptx"))
    args = _adam_inputs(np.random.default_rng(0))
    got, want = run_emulated(exe, *args), xlac.compile(program).run(*args)
    assert len(got) == len(want) == 3 * len(ADAM_SHAPES)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_tiled_kernels_of_other_block_shapes_share_a_launch():
    exe, apart = _compiled(MIXED), _compiled(MIXED, (PASS,))
    # the row sum is split over two blocks a row, then a second launch folds the
    # halves: the matmul's tiles, the transpose's and the first half are one launch
    assert _launches(apart) == 4 and _launches(exe) == 2
    ptxas(exe.as_text("ptx"))
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(shape).astype(np.float32) for shape in MIXED_SHAPES]
    got, want = run_emulated(exe, *args), xlac.compile(MIXED).run(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


# the second kernel reads what the first writes: they stay two launches
CHAIN = """
func.func @main(%x: tensor<16x300xf32>) -> tensor<16x300xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x300xf32>, tensor<f32>) -> tensor<16xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<16xf32>) -> tensor<16x300xf32>
  %y = stablehlo.subtract %x, %b : tensor<16x300xf32>
  %t = stablehlo.transpose %y, dims = [1, 0] : (tensor<16x300xf32>) -> tensor<300x16xf32>
  %e = stablehlo.exponential %t : tensor<300x16xf32>
  %u = stablehlo.transpose %e, dims = [1, 0] : (tensor<300x16xf32>) -> tensor<16x300xf32>
  return %u : tensor<16x300xf32>
}"""


def test_dependent_kernels_stay_apart_and_keep_their_values():
    exe, apart = _compiled(CHAIN), _compiled(CHAIN, (PASS,))
    assert _launches(exe) == _launches(apart)
    x = np.random.default_rng(2).standard_normal((16, 300)).astype(np.float32)
    (got,), (want,) = run_emulated(exe, x), xlac.compile(CHAIN).run(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
