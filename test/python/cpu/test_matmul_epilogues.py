"""A dot's bias and residual adds run in the matmul's register tiles (k in one
block) or thread chunks (longer k; epilogue_plan.py): one thread loop instead of
two, results bit for bit those of the epilogue run as a pass of its own, and
the interpreter's within rounding."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

ROWS, IMAGES, K, N = 197, 4, 192, 192   # ViT's projection: 788 rows, AVX2's 6-row tiles leave 2 (peeled)


def _program(k: int, epilogue: str, also_c: bool = False, w_transposed: bool = False) -> str:
    """x [IMAGES, ROWS, k] . w [k, N] (w [N, k] when ``w_transposed``, as
    PyTorch keeps it), then ``epilogue`` on %d (the dot), %bb (the bias
    broadcast along rows) and %r (a residual); with ``also_c`` the dot is
    returned too, so C must be written whole (no epilogue fusion)."""
    t = f"tensor<{IMAGES}x{ROWS}x{N}xf32>"
    w = f"tensor<{N}x{k}xf32>" if w_transposed else f"tensor<{k}x{N}xf32>"
    results = f"{t}, {t}" if also_c else t
    returned = "%e, %d" if also_c else "%e"
    return (f"func.func @main(%x: tensor<{IMAGES}x{ROWS}x{k}xf32>, %w: {w}, "
            f"%b: tensor<{N}xf32>, %r: {t}) -> ({results}) {{\n"
            f"  %d = stablehlo.dot_general %x, %w, contracting_dims = [2] x [{int(w_transposed)}] : "
            f"(tensor<{IMAGES}x{ROWS}x{k}xf32>, {w}) -> {t}\n"
            f"  %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<{N}xf32>) -> {t}\n"
            f"{epilogue.format(t=t)}"
            f"  return {returned} : {results}\n}}")


BIAS_RESIDUAL = ("  %s = stablehlo.add %d, %bb : {t}\n"
                 "  %e = stablehlo.add %s, %r : {t}\n")
BIAS_RELU = ("  %s = stablehlo.add %d, %bb : {t}\n"
             "  %z = stablehlo.constant dense<0.0> : {t}\n"
             "  %e = stablehlo.maximum %s, %z : {t}\n")


def _inputs(k: int, w_transposed: bool = False) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape, dtype=np.float32)
            for shape in ((IMAGES, ROWS, k), (N, k) if w_transposed else (k, N), (N,), (IMAGES, ROWS, N))]


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3"])
@pytest.mark.parametrize("k", [K, 768])           # one k block; three (the epilogue after the last)
@pytest.mark.parametrize("epilogue", [BIAS_RESIDUAL, BIAS_RELU], ids=["bias_residual", "bias_relu"])
def test_epilogue_in_the_matmul_chunks(cpu, k, epilogue):
    text = _program(k, epilogue)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert "not scheduled:" not in exe.fusion_report()
    assert exe.as_text("bufferized").count("scf.forall") == 1      # one thread loop: C and epilogue
    apart = xlac.compile(_program(k, epilogue, also_c=True), cache=False, cpu=cpu)
    assert apart.as_text("bufferized").count("scf.forall") == 2     # C written whole, then the epilogue
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and scheduled: checked)")
    inputs = _inputs(k)
    got = np.asarray(exe(*inputs))
    alone = np.asarray(apart(*inputs)[0])
    np.testing.assert_array_equal(got.view(np.uint32), alone.view(np.uint32))   # same sums, same order
    x, w, b, r = (i.astype(np.float64) for i in inputs)
    s = x @ w + b
    np.testing.assert_allclose(got, s + r if epilogue == BIAS_RESIDUAL else np.maximum(s, 0),
                               rtol=1e-4, atol=1e-3)


@pytest.mark.heavy
def test_an_epilogue_in_the_chunks_matches_the_interpreter():
    """Once against the interpreter (its dot takes ~25 s): the epilogue that reads a second tensor."""
    if "x86-64-v3" not in runnable_levels("x86-64-v3"):
        pytest.skip("this CPU cannot run x86-64-v3 code")
    text = _program(K, BIAS_RESIDUAL)
    inputs = _inputs(K)
    (want,) = shared_server().run(text.encode(), inputs)
    np.testing.assert_allclose(np.asarray(xlac.compile(text, cache=False, cpu="x86-64-v3")(*inputs)), want,
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3"])
def test_epilogue_with_b_transposed_in_the_packing(cpu):
    """GPT-2's weights are [n, k]: B's transpose is made per chunk into the
    packed buffer, and the bias and residual go onto each register tile."""
    text = _program(K, BIAS_RESIDUAL, w_transposed=True)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert "not scheduled:" not in exe.fusion_report()
    assert exe.as_text("bufferized").count("scf.forall") == 1
    apart = xlac.compile(_program(K, BIAS_RESIDUAL, also_c=True, w_transposed=True), cache=False, cpu=cpu)
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and scheduled: checked)")
    inputs = _inputs(K, w_transposed=True)
    got = np.asarray(exe(*inputs))
    np.testing.assert_array_equal(got.view(np.uint32), np.asarray(apart(*inputs)[0]).view(np.uint32))
    x, w, b, r = (i.astype(np.float64) for i in inputs)
    np.testing.assert_allclose(got, x @ w.T + b + r, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("k", [K, 768])     # one k block: the register tiles; three: after the chunk's panels
def test_avx512_plain_plan_epilogue_in_its_threads(k):
    """x86-64-v4's plain plans (ViT's and BERT's [k, n] weights): with k in one
    block the epilogue runs in the register tiles, with longer k on the
    chunk after its last k block; one thread loop either way, bit for bit the
    epilogue run apart."""
    exe = xlac.compile(_program(k, BIAS_RESIDUAL), cache=False, cpu="x86-64-v4")
    assert "not scheduled:" not in exe.fusion_report()
    assert exe.as_text("bufferized").count("scf.forall") == 1
    if "x86-64-v4" not in runnable_levels("x86-64-v4"):
        pytest.skip("this CPU cannot run x86-64-v4 code (compiled and scheduled: checked)")
    apart = xlac.compile(_program(k, BIAS_RESIDUAL, also_c=True), cache=False, cpu="x86-64-v4")
    inputs = _inputs(k)
    got = np.asarray(exe(*inputs))
    np.testing.assert_array_equal(got.view(np.uint32), np.asarray(apart(*inputs)[0]).view(np.uint32))
    x, w, b, r = (i.astype(np.float64) for i in inputs)
    np.testing.assert_allclose(got, x @ w + b + r, rtol=1e-4, atol=1e-3)


def _gpt2_linear(k: int, n: int, residual: bool, also_c: bool = False) -> str:
    """GPT-2's linears: x [2, 128, k] . w^T (w [n, k], as its checkpoint keeps
    it) + bias, + a residual; with ``also_c`` the dot is returned too."""
    x, t = f"tensor<2x128x{k}xf32>", f"tensor<2x128x{n}xf32>"
    results = f"{t}, {t}" if also_c else t
    args = f"%x: {x}, %w: tensor<{n}x{k}xf32>, %b: tensor<{n}xf32>" + (f", %r: {t}" if residual else "")
    epilogue = (f"  %s = stablehlo.add %d, %bb : {t}\n  %e = stablehlo.add %r, %s : {t}\n" if residual
                else f"  %e = stablehlo.add %d, %bb : {t}\n")
    return (f"func.func @main({args}) -> ({results}) {{\n"
            f"  %d = stablehlo.dot_general %x, %w, contracting_dims = [2] x [1] : "
            f"({x}, tensor<{n}x{k}xf32>) -> {t}\n"
            f"  %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<{n}xf32>) -> {t}\n"
            + epilogue +
            f"  return {'%e, %d' if also_c else '%e'} : {results}\n}}")


@pytest.mark.parametrize("k, n, residual", [
    (256, 768, False),      # the attention's Q, K, V projection: register tiles
    (256, 256, True),       # its output projection: register tiles
    (1024, 256, True),      # the MLP's second dot, four k blocks: the chunk's epilogue
], ids=["qkv", "attn_out", "mlp_out"])
def test_gpt2_linears_keep_their_epilogues(k, n, residual):
    """Every GPT-2 matmul with a bias (and residual) is one kernel at
    x86-64-v3, its B transposed in the packing and the epilogue in its tiles
    (the MLP's k = 1024 one was a second kernel reading C back, then B's
    transpose a kernel of its own);
    two at x86-64-v2 (its 8-lane tiles keep B's transpose a kernel of its
    own, the epilogue in the matmul's); x86-64-v4 compiles (its plan keeps
    the epilogue apart).
    Results bit for bit those of the epilogue run apart."""
    text = _gpt2_linear(k, n, residual)
    rng = np.random.default_rng(1)
    shapes = [(2, 128, k), (n, k), (n,)] + ([(2, 128, n)] if residual else [])
    inputs = [rng.standard_normal(shape, dtype=np.float32) for shape in shapes]
    # x86-64-v3, k of several blocks too: B's whole-k panels made by the transpose
    # (transposed_b.whole_k_transposed_panels_avx2), the epilogue in the tiles
    for cpu, kernels in (("x86-64-v2", 2), ("x86-64-v3", 1), ("x86-64-v4", None)):
        exe = xlac.compile(text, cache=False, cpu=cpu)
        assert "not scheduled:" not in exe.fusion_report()
        if kernels is None:
            continue
        assert exe.as_text("llvm").count("llvm.func @xla_kernel_") == kernels   # no epilogue kernel
        if cpu not in runnable_levels(cpu):
            continue
        got = np.asarray(exe(*inputs))
        apart = xlac.compile(_gpt2_linear(k, n, residual, also_c=True), cache=False, cpu=cpu)
        np.testing.assert_array_equal(got.view(np.uint32), np.asarray(apart(*inputs)[0]).view(np.uint32))
        x, w, b, *r = (i.astype(np.float64) for i in inputs)
        want = x @ w.T + b + (r[0] if residual else 0)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def _step_program(with_c: bool) -> str:
    """An LSTM step's gate product and bias, 8 x 256 . 256 x 1024 (one 8-row
    register tile at AVX-512); with ``with_c`` the product is returned too."""
    c = "tensor<8x1024xf32>"
    results = f"{c}, {c}" if with_c else c
    return ("func.func @main(%h: tensor<8x256xf32>, %w: tensor<256x1024xf32>, %b: tensor<1024xf32>)"
            f" -> ({results}) {{\n"
            f"  %d = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : "
            f"(tensor<8x256xf32>, tensor<256x1024xf32>) -> {c}\n"
            f"  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<1024xf32>) -> {c}\n"
            f"  %e = stablehlo.add %d, %bb : {c}\n"
            f"  return {'%e, %d' if with_c else '%e'} : {results}\n}}")


@pytest.mark.parametrize(("cpu", "micro_kernels"),
                         [("x86-64-v4", True), ("x86-64-v4", False), ("x86-64-v3", True)])
def test_one_row_tile_reads_b_in_place(cpu, micro_kernels):
    """Rows that are one register tile (AVX-512's 8 x 32; AVX2's 8 rows as one
    8 x 8 tile) read B where it is: no packed panel, which each tile would
    read once; bit for bit the packed plan's sums."""
    options = xlac.Options(micro_kernels=micro_kernels)
    exe = xlac.compile(_step_program(False), cache=False, cpu=cpu, options=options)
    assert "not scheduled:" not in exe.fusion_report()
    text = exe.as_text("bufferized")
    assert text.count("scf.forall") == 1 and "memref.alloc" not in text    # no panel buffer
    packed = xlac.compile(_step_program(True), cache=False, cpu=cpu, options=options)
    assert "memref.alloc" in packed.as_text("bufferized")                  # C returned: packed panels
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and scheduled: checked)")
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(s, dtype=np.float32) for s in ((8, 256), (256, 1024), (1024,))]
    got = np.asarray(exe(*inputs))
    want = np.asarray(packed(*inputs)[0])
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    h, w, b = (i.astype(np.float64) for i in inputs)
    np.testing.assert_allclose(got, h @ w + b, rtol=1e-4, atol=1e-3)
