"""The CPU code generator: tiled, vectorized, parallel kernels against numpy,
on shapes that leave partial tiles everywhere, and the one-thread knob."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels


def _tensor(shape, dtype="f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def _dot(a_shape, b_shape, out_shape, dims: str) -> str:
    a, b, out = _tensor(a_shape), _tensor(b_shape), _tensor(out_shape)
    return (f"func.func @main(%a: {a}, %b: {b}) -> {out} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, {dims} : ({a}, {b}) -> {out}\n"
            f"  return %0 : {out}\n}}\n")


def _relative_error(got, want) -> float:
    want = np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


@pytest.fixture
def rng():
    return np.random.default_rng(3)


@pytest.mark.parametrize("m,n,k", [(127, 33, 65), (1000, 96, 64), (64, 512, 300), (8, 32, 1)])
def test_matmul_odd_shapes(rng, m, n, k):
    exe = xlac.compile(_dot((m, k), (k, n), (m, n), "contracting_dims = [1] x [0]"), cache=False)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    assert _relative_error(exe(a, b), a.astype(np.float64) @ b) < 1e-5


def test_batch_matmul_transposed_b(rng):
    """Attention's Q.K^T: a batch matmul with k last in both operands."""
    exe = xlac.compile(_dot((3, 45, 20), (3, 37, 20), (3, 45, 37),
                            "batching_dims = [0] x [0], contracting_dims = [2] x [2]"),
                       cache=False)
    q = rng.standard_normal((3, 45, 20), dtype=np.float32)
    k = rng.standard_normal((3, 37, 20), dtype=np.float32)
    want = np.einsum("bmk,bnk->bmn", q.astype(np.float64), k)
    assert _relative_error(exe(q, k), want) < 1e-5


def test_transposed_a_gradient(rng):
    """X^T . dY, the weight gradient of a dense layer."""
    exe = xlac.compile(_dot((300, 70), (300, 50), (70, 50), "contracting_dims = [0] x [0]"),
                       cache=False)
    x = rng.standard_normal((300, 70), dtype=np.float32)
    dy = rng.standard_normal((300, 50), dtype=np.float32)
    assert _relative_error(exe(x, dy), x.T.astype(np.float64) @ dy) < 1e-5


def test_conv2d_odd_shape(rng):
    x_t, w_t, y_t = _tensor((2, 13, 11, 5)), _tensor((3, 3, 5, 7)), _tensor((2, 13, 11, 7))
    exe = xlac.compile(
        f"func.func @main(%x: {x_t}, %w: {w_t}) -> {y_t} {{\n"
        f"  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
        " window = {stride = [1, 1], pad = [[1, 1], [1, 1]]}"
        " {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
        f" : ({x_t}, {w_t}) -> {y_t}\n  return %0 : {y_t}\n}}\n", cache=False)
    x = rng.standard_normal((2, 13, 11, 5), dtype=np.float32)
    w = rng.standard_normal((3, 3, 5, 7), dtype=np.float32)
    padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    want = sum(np.einsum("nhwc,cf->nhwf", padded[:, i:i + 13, j:j + 11], w[i, j])
               for i in range(3) for j in range(3))
    assert _relative_error(exe(x, w), want) < 1e-5


@pytest.mark.parametrize("shape,axis", [((1001,), 0), ((300000,), 0), ((33, 1000), 1),
                                        ((257, 130), 0), ((5, 77, 129), 2),
                                        # columns of a partial vector (these failed in the JIT)
                                        ((6, 40, 3), 0), ((6, 3, 40), 0), ((40, 6, 3), 1)])
def test_sum_odd_shapes(rng, shape, axis):
    kept = [d for i, d in enumerate(shape) if i != axis]
    src = (f"func.func @main(%x: {_tensor(shape)}) -> {_tensor(kept)} {{\n"
           "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           f"  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [{axis}]"
           f" : ({_tensor(shape)}, tensor<f32>) -> {_tensor(kept)}\n"
           f"  return %0 : {_tensor(kept)}\n}}\n")
    x = rng.standard_normal(shape, dtype=np.float32)
    got = xlac.compile(src, cache=False)(x)
    want = x.astype(np.float64).sum(axis=axis)
    assert np.abs(got - want).max() < 1e-5 * np.abs(x).sum(axis=axis).max()


@pytest.mark.parametrize("shape,axis", [((300000,), 0), ((33, 1000), 1), ((257, 130), 0),
                                        ((5, 77, 129), 2), ((6, 40, 3), 0)])
@pytest.mark.parametrize("cpu", ["x86-64-v3", "host"])
def test_f64_and_i64_sums_by_the_reduction_schedules(rng, shape, axis, cpu):
    """8-byte sums take the reduction schedules (16-lane partials: two AVX-512
    registers, four AVX2 ones), every partial tile included."""
    from conftest import runnable_levels
    kept = [d for i, d in enumerate(shape) if i != axis]
    for dtype, numpy_type in (("f64", np.float64), ("i64", np.int64)):
        zero = "0.0" if dtype == "f64" else "0"
        src = (f"func.func @main(%x: {_tensor(shape, dtype)}) -> {_tensor(kept, dtype)} {{\n"
               f"  %z = stablehlo.constant dense<{zero}> : tensor<{dtype}>\n"
               f"  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [{axis}]"
               f" : ({_tensor(shape, dtype)}, tensor<{dtype}>) -> {_tensor(kept, dtype)}\n"
               f"  return %0 : {_tensor(kept, dtype)}\n}}\n")
        exe = xlac.compile(src, cpu=cpu, cache=False)
        assert "scalar loops" not in exe.fusion_report()
        if cpu not in runnable_levels(cpu):
            continue
        x = (rng.standard_normal(shape) * 100).astype(numpy_type)
        got, want = exe(x), x.sum(axis=axis)
        if dtype == "i64":
            np.testing.assert_array_equal(got, want)
        else:
            assert np.abs(got - want).max() <= 1e-12 * np.abs(x).sum(axis=axis).max()


@pytest.mark.parametrize("op,fn", [("exponential", np.exp), ("tanh", np.tanh)])
def test_vectorized_exp_tanh_accuracy(op, fn):
    """xla-approximate-math's polynomials stay within a few ulp of libm."""
    x = np.concatenate([np.linspace(-100, 90, 50000), np.linspace(-1, 1, 50001),
                        [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(np.float32)
    t = _tensor(x.shape)
    exe = xlac.compile(f"func.func @main(%x: {t}) -> {t} {{\n  %0 = stablehlo.{op} %x : {t}\n"
                       f"  return %0 : {t}\n}}\n", cache=False)
    got = exe(x)
    with np.errstate(over="ignore"):
        want = fn(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_max_ulp(got, want, maxulp=3)


def test_one_thread_knob(monkeypatch, rng):
    """XLAC_NUM_THREADS=1 compiles without parallel regions, same numbers."""
    src = _dot((256, 256), (256, 256), (256, 256), "contracting_dims = [1] x [0]")
    a = rng.standard_normal((256, 256), dtype=np.float32)
    b = rng.standard_normal((256, 256), dtype=np.float32)
    monkeypatch.setenv("XLAC_NUM_THREADS", "2")
    parallel = xlac.compile(src, cache=False)
    assert "omp.parallel" in parallel.as_text("llvm")      # stages are made on request
    monkeypatch.setenv("XLAC_NUM_THREADS", "1")
    serial = xlac.compile(src, cache=False)
    assert "omp.parallel" not in serial.as_text("llvm")
    np.testing.assert_array_equal(parallel(a, b), serial(a, b))


def test_no_copy_into_outputs():
    """A scheduled elementwise op writes straight into the caller's buffer."""
    t = _tensor((4096,))
    exe = xlac.compile(f"func.func @main(%x: {t}) -> {t} {{\n  %0 = stablehlo.add %x, %x : {t}\n"
                       f"  return %0 : {t}\n}}\n", cache=False)
    text = exe.as_text("bufferized")
    assert "memref.alloc" not in text and "memref.copy" not in text
    x = np.arange(4096, dtype=np.float32)
    np.testing.assert_array_equal(exe(x), 2 * x)


def _softmax(shape) -> str:
    t, rows = _tensor(shape), _tensor(shape[:-1])
    last, keep = len(shape) - 1, ", ".join(str(i) for i in range(len(shape) - 1))
    return (f"func.func @main(%x: {t}) -> {t} {{\n"
            "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
            "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
            f"  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [{last}]"
            f" : ({t}, tensor<f32>) -> {rows}\n"
            f"  %mb = stablehlo.broadcast_in_dim %m, dims = [{keep}] : ({rows}) -> {t}\n"
            f"  %d = stablehlo.subtract %x, %mb : {t}\n"
            f"  %e = stablehlo.exponential %d : {t}\n"
            f"  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [{last}]"
            f" : ({t}, tensor<f32>) -> {rows}\n"
            f"  %sb = stablehlo.broadcast_in_dim %s, dims = [{keep}] : ({rows}) -> {t}\n"
            f"  %r = stablehlo.divide %e, %sb : {t}\n"
            f"  return %r : {t}\n}}\n")


@pytest.mark.parametrize("shape", [(300, 77), (4096, 1024), (3, 130, 50), (2, 3, 50, 77), (4, 3, 197, 197)])
def test_fused_softmax(rng, shape):
    """Softmax's reductions and elementwise ops run fused per row (one
    parallel loop, no temporaries of the full size), same numbers as numpy.
    Each row's exponentials are computed once (one loop and at most one
    peeled tail, read by both the sum and the divide), and no step is masked
    but a row's constant-masked tail (no mask made from the loop index)."""
    exe = xlac.compile(_softmax(shape), cache=False)
    text = exe.as_text("bufferized")
    assert text.count("scf.forall") <= 1 and "memref.copy" not in text
    assert text.count("math.exp") <= 2 and "vector.create_mask" not in text
    assert f"memref.alloc() {{alignment = 64 : i64}} : memref<{'x'.join(map(str, shape))}xf32>" not in text
    x = 4 * rng.standard_normal(shape, dtype=np.float32)
    e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
    assert _relative_error(exe(x), e / e.sum(-1, keepdims=True)) < 1e-6


def test_fused_layernorm(rng):
    """Mean, variance and normalization fused per row, against numpy."""
    t, rows, vec = _tensor((257, 100)), _tensor((257,)), _tensor((100,))
    src = (f"func.func @main(%x: {t}, %g: {vec}) -> {t} {{\n"
           "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
           f"  %n = stablehlo.constant dense<100.0> : {rows}\n"
           f"  %eps = stablehlo.constant dense<1.0e-5> : {rows}\n"
           f"  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]"
           f" : ({t}, tensor<f32>) -> {rows}\n"
           f"  %mean = stablehlo.divide %s, %n : {rows}\n"
           f"  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : ({rows}) -> {t}\n"
           f"  %c = stablehlo.subtract %x, %mb : {t}\n"
           f"  %sq = stablehlo.multiply %c, %c : {t}\n"
           f"  %v = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1]"
           f" : ({t}, tensor<f32>) -> {rows}\n"
           f"  %var = stablehlo.divide %v, %n : {rows}\n"
           f"  %ve = stablehlo.add %var, %eps : {rows}\n"
           f"  %inv = stablehlo.rsqrt %ve : {rows}\n"
           f"  %ib = stablehlo.broadcast_in_dim %inv, dims = [0] : ({rows}) -> {t}\n"
           f"  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : ({vec}) -> {t}\n"
           f"  %y = stablehlo.multiply %c, %ib : {t}\n"
           f"  %r = stablehlo.multiply %y, %gb : {t}\n"
           f"  return %r : {t}\n}}\n")
    x = rng.standard_normal((257, 100), dtype=np.float32) + 3
    g = rng.standard_normal(100, dtype=np.float32)
    x64 = x.astype(np.float64)
    c = x64 - x64.mean(-1, keepdims=True)
    want = c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * g
    assert _relative_error(xlac.compile(src, cache=False)(x, g), want) < 1e-5


@pytest.mark.parametrize("cpu, vector_bytes", [("x86-64-v2", 16), ("x86-64-v3", 32),
                                               ("x86-64-v4", 64)])
def test_each_cpu_level_gets_its_vector_width(cpu, vector_bytes):
    """SSE, AVX2 and AVX-512 widths are chosen by the CPU model, not the host: each
    compiles on any machine, and runs here where the host has the features."""
    exe = xlac.compile("func.func @main(%x: tensor<1000xf32>) -> tensor<1000xf32> {\n"
                       "  %0 = stablehlo.tanh %x : tensor<1000xf32>\n  return %0 : tensor<1000xf32>\n}",
                       cache=False, cpu=cpu)
    # tanh is math-heavy: four registers of vector_bytes / 4 lanes per step
    assert f"vector<{vector_bytes}xf32>" in exe.as_text("llvm")
    from xlac.cpu_model import cpu_model
    if cpu_model("host").lacks(cpu_model(cpu).features):
        return                     # AVX-512 code on an AVX2 host would die of SIGILL
    x = np.linspace(-5, 5, 1000, dtype=np.float32)
    np.testing.assert_allclose(exe(x), np.tanh(x), rtol=1e-6, atol=1e-7)


_MATMUL_TANH = """func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = stablehlo.tanh %0 : tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}"""


@pytest.mark.parametrize("cpu, allowed, wanted", [("x86-64-v2", ("xmm",), "xmm"),
                                                  ("x86-64-v3", ("xmm", "ymm"), "ymm"),
                                                  ("x86-64-v4", ("xmm", "ymm", "zmm"), "zmm")])
def test_machine_code_is_made_for_the_cpu_level_not_the_host(cpu, allowed, wanted, tmp_path):
    """An artifact for x86-64-v3 made on an AVX-512 host holds no AVX-512
    instruction (it would stop with SIGILL on the AVX2 machine it is for), and
    one for x86-64-v4 uses AVX-512 on any host (xla-target-cpu)."""
    import shutil
    import subprocess

    from xlac.aot import compile_library
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) not found")
    library = tmp_path / "libm.so"
    compile_library(_MATMUL_TANH.encode(), "m.mlir", library,
                    options=xlac.Options.from_env().replace(cpu=cpu, cache_dir=None,
                                                            progress="off"))
    code = subprocess.run([objdump, "-d", str(library)], capture_output=True, text=True).stdout
    registers = {name for name in ("xmm", "ymm", "zmm") if f"%{name}" in code}
    assert wanted in registers and registers <= set(allowed), registers


def test_code_for_a_cpu_this_host_lacks_is_refused_not_run(monkeypatch):
    from xlac import cpu_model as model
    monkeypatch.setattr(model, "host_features", lambda: tuple(sorted(model.LEVELS["x86-64-v3"])))
    exe = xlac.compile(_MATMUL_TANH, cache=False, cpu="x86-64-v4")
    a = np.ones((64, 64), np.float32)
    with pytest.raises(xlac.XlacError, match="compiled for x86-64-v4.*lacks.*avx512f"):
        exe(a, a)
    assert len(exe.serialize()) > 0                  # it can still be saved for such a CPU


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_elementwise_kernels_loops_stay_rolled(rng, cpu):
    """A residual add's vector loops reach LLVM marked not to unroll
    (xla-no-unroll-elementwise-loops: unrolled, such a kernel took twice the
    machine code time for no speed), and it adds right where the host runs it."""
    t = _tensor((4, 197, 192))
    exe = xlac.compile(f"func.func @main(%x: {t}, %y: {t}) -> {t} {{\n"
                       f"  %0 = stablehlo.add %x, %y : {t}\n  return %0 : {t}\n}}\n",
                       cpu=cpu, cache=False)
    assert "loop_annotation = #" in exe.as_text("llvm")
    if cpu not in runnable_levels(cpu):
        return
    x, y = (rng.standard_normal((4, 197, 192), dtype=np.float32) for _ in range(2))
    np.testing.assert_array_equal(exe(x, y), x + y)
