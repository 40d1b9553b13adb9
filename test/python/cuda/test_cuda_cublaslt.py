"""Matmuls on cuBLASLt (cuda_contractions): the descriptors the runtime makes,
run by a fake cuBLASLt that interprets them (xlac_emulator.fake_cublaslt),
against the cpu target; the fallback to the generated kernels; and, on a GPU
with the library, the real cuBLASLt against numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac.targets.cuda import cublaslt, gemm_calls
from xlac.targets.cuda.errors import CudaUnavailable
from xlac.targets.cuda.schedule import Gemm, Launch
from xlac_emulator.fake_cublaslt import FakeCublasLt, tf32
from xlac_emulator.fake_cuda import FakeDriver
from xlac_emulator.simt import run_emulated

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

LIBRARY = xlac.Options.from_env().replace(cuda_contractions="cublaslt", cache_dir="")
GENERATED = LIBRARY.replace(cuda_contractions="generated")
BF16 = np.dtype(ml_dtypes.bfloat16)


def dot(a: str, b: str, out: str, dims: str, precision: str = "", epilogue: str = "") -> str:
    """A dot_general of a and b into out (``dims``: its dimension numbers), maybe followed
    by ``epilogue`` lines on %0 (the result is %r)."""
    given = f", precision = [{precision}, {precision}]" if precision else ""
    body = epilogue
    result = "%r" if epilogue else "%0"
    extra = ", %bias: tensor<{}xf32>".format(out.split("x")[-2]) if "%bias" in epilogue else ""
    return (f"func.func @main(%a: {a}, %b: {b}{extra}) -> {out} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, {dims}{given} : ({a}, {b}) -> {out}\n"
            f"{body}  return {result} : {out}\n}}")


def _random(shape, dtype, seed):
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return values.astype(dtype)


def _compile(text: str, options=LIBRARY):
    exe = xlac.compile(text, target="cuda", options=options)
    return exe, [s for s in exe.function.steps if isinstance(s, Gemm)]


def _check(text: str, shapes, dtype, rtol, atol=0.0, gemms=1, epilogue=""):
    """The cuda program on the fake cuBLASLt against the cpu target."""
    exe, steps = _compile(text)
    assert len(steps) == gemms and all(s.epilogue == epilogue for s in steps)
    args = [_random(shape, dtype if i < 2 else np.float32, i) for i, shape in enumerate(shapes)]
    got = run_emulated(exe, *args)[0]
    want = xlac.compile(text, target="cpu").run(*args)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)
    return steps


# Shapes not multiples of 16; each layout cuBLASLt must read differently.
LAYOUTS = {
    "plain": ("tensor<33x47x{t}>", "tensor<47x21x{t}>", "tensor<33x21x{o}>", "contracting_dims = [1] x [0]"),
    "b_transposed": ("tensor<33x47x{t}>", "tensor<21x47x{t}>", "tensor<33x21x{o}>",
                     "contracting_dims = [1] x [1]"),
    "a_transposed": ("tensor<47x33x{t}>", "tensor<47x21x{t}>", "tensor<33x21x{o}>",
                     "contracting_dims = [0] x [0]"),
    "batched": ("tensor<3x33x47x{t}>", "tensor<3x47x21x{t}>", "tensor<3x33x21x{o}>",
                "batching_dims = [0] x [0], contracting_dims = [2] x [1]"),
    "batched_b_transposed": ("tensor<3x33x47x{t}>", "tensor<3x21x47x{t}>", "tensor<3x33x21x{o}>",
                             "batching_dims = [0] x [0], contracting_dims = [2] x [2]"),
}
# element, result, compute type expected, tolerance against the cpu target (f32 sums in any order)
TYPES = {
    "f32_default": ("f32", "f32", "", "f32", 2e-5),     # full f32 unless matmul_precision says TF32
    "f32_highest": ("f32", "f32", "HIGHEST", "f32", 2e-5),
    "f64": ("f64", "f64", "", "f64", 1e-12),
    "bf16": ("bf16", "bf16", "", "f32", 1e-2),           # one rounding to bf16 (8 bits) either way
    "f16": ("f16", "f16", "", "f32", 2e-3),
    "bf16_into_f32": ("bf16", "f32", "", "f32", 2e-5),   # preferred_element_type=f32
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", sorted(TYPES))
def test_every_type_and_layout_against_the_cpu_target(kind, layout):
    element, result, precision, compute, rtol = TYPES[kind]
    a, b, out, dims = (x.format(t=element, o=result) for x in LAYOUTS[layout])
    shapes = [_shape(a), _shape(b)]
    dtype = {"f32": np.float32, "f64": np.float64, "bf16": BF16, "f16": np.float16}[element]
    steps = _check(dot(a, b, out, dims, precision), shapes, dtype, rtol, atol=rtol)
    assert steps[0].compute == compute and steps[0].beta == 0.0


def _shape(tensor: str) -> tuple[int, ...]:
    return tuple(int(d) for d in tensor[len("tensor<"):-1].split("x")[:-1])


def test_tensorfloat32_is_opt_in_and_highest_stays_f32():
    """matmul_precision="tensorfloat32": DEFAULT dots take inputs rounded to TF32 (as XLA
    on Hopper); HIGHEST ones stay full f32; without the option every f32 dot is f32."""
    a, b, out, dims = (x.format(t="f32", o="f32") for x in LAYOUTS["plain"])
    x, y = _random((33, 47), np.float32, 0), _random((47, 21), np.float32, 1)
    tensorfloat32 = LIBRARY.replace(matmul_precision="tensorfloat32")
    default, steps = _compile(dot(a, b, out, dims), tensorfloat32)
    assert steps[0].compute == "tf32"
    highest, highest_steps = _compile(dot(a, b, out, dims, "HIGHEST"), tensorfloat32)
    assert highest_steps[0].compute == "f32"
    assert _compile(dot(a, b, out, dims))[1][0].compute == "f32"
    got, exact = run_emulated(default, x, y)[0], run_emulated(highest, x, y)[0]
    tf32_reference = tf32(x).astype(np.float64) @ tf32(y).astype(np.float64)
    np.testing.assert_allclose(got, tf32_reference, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(exact, x.astype(np.float64) @ y, rtol=1e-5, atol=1e-5)
    assert np.abs(got - exact).max() > 1e-4          # TF32's 10 bits are visible
    np.testing.assert_allclose(got, exact, rtol=2e-2, atol=2e-2)
    assert xlac.Options.from_env({"XLAC_MATMUL_PRECISION": "tf32"}).matmul_precision == "tensorfloat32"
    assert xlac.Options.from_env({"XLAC_MATMUL_PRECISION": "x"}).matmul_precision == "highest"


BIAS_RELU = """
  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<21xf32>) -> tensor<33x21xf32>
  %s = stablehlo.add %0, %bb : tensor<33x21xf32>
  %z = stablehlo.constant dense<0.0> : tensor<33x21xf32>
  %r = stablehlo.maximum %s, %z : tensor<33x21xf32>
"""
GELU = """
  %c3 = stablehlo.constant dense<0.044715> : tensor<33x21xf32>
  %c2 = stablehlo.constant dense<0.797884583> : tensor<33x21xf32>
  %one = stablehlo.constant dense<1.0> : tensor<33x21xf32>
  %half = stablehlo.constant dense<0.5> : tensor<33x21xf32>
  %x2 = stablehlo.multiply %X, %X : tensor<33x21xf32>
  %x3 = stablehlo.multiply %x2, %X : tensor<33x21xf32>
  %t3 = stablehlo.multiply %c3, %x3 : tensor<33x21xf32>
  %in = stablehlo.add %X, %t3 : tensor<33x21xf32>
  %sc = stablehlo.multiply %c2, %in : tensor<33x21xf32>
  %th = stablehlo.tanh %sc : tensor<33x21xf32>
  %p1 = stablehlo.add %one, %th : tensor<33x21xf32>
  %hf = stablehlo.multiply %half, %p1 : tensor<33x21xf32>
  %r = stablehlo.multiply %X, %hf : tensor<33x21xf32>
"""
EPILOGUES = {
    "bias": BIAS_RELU.rsplit("  %z", 1)[0].replace("%s =", "%r ="),
    "gelu": GELU.replace("%X", "%0"),
    "bias_gelu": BIAS_RELU.rsplit("  %z", 1)[0] + GELU.replace("%X", "%s"),
    "relu": "  %z = stablehlo.constant dense<0.0> : tensor<33x21xf32>\n"
            "  %r = stablehlo.maximum %0, %z : tensor<33x21xf32>\n",
    "bias_relu": BIAS_RELU,
}


@pytest.mark.parametrize("epilogue", sorted(EPILOGUES))
def test_bias_and_relu_epilogues_run_in_the_library(epilogue):
    a, b, out, dims = (x.format(t="f32", o="f32") for x in LAYOUTS["plain"])
    text = dot(a, b, out, dims, "HIGHEST", EPILOGUES[epilogue])
    shapes = [(33, 47), (47, 21)] + ([(21,)] if "bias" in epilogue else [])
    _check(text, shapes, np.float32, 2e-5, 2e-5, epilogue=epilogue)


@pytest.mark.parametrize("change", [("0.044715", "0.05"), ("stablehlo.tanh %sc", "stablehlo.logistic %sc")])
def test_a_gelu_written_otherwise_is_not_the_library_s(change):
    """Another constant or another function than the library's tanh form: a kernel after it."""
    a, b, out, dims = (x.format(t="f32", o="f32") for x in LAYOUTS["plain"])
    other = GELU.replace("%X", "%0").replace(*change)
    _, steps = _compile(dot(a, b, out, dims, "HIGHEST", other))
    assert steps[0].epilogue == ""
    _check(dot(a, b, out, dims, "HIGHEST", other), [(33, 47), (47, 21)], np.float32, 2e-5, 2e-5)


def test_an_epilogue_the_library_lacks_runs_as_a_kernel_after_it():
    a, b, out, dims = (x.format(t="f32", o="f32") for x in LAYOUTS["plain"])
    tanh = "  %r = stablehlo.tanh %0 : tensor<33x21xf32>\n"
    exe, steps = _compile(dot(a, b, out, dims, "HIGHEST", tanh))
    assert steps[0].epilogue == "" and any(isinstance(s, Launch) for s in exe.function.steps)
    _check(dot(a, b, out, dims, "HIGHEST", tanh), [(33, 47), (47, 21)], np.float32, 2e-5, 2e-5)


def test_a_wrong_descriptor_gives_wrong_results(monkeypatch):
    """The fake reads what the descriptors say: a transpose flag flipped reads the
    other elements (a square problem, so the shapes still agree)."""
    text = dot("tensor<24x24xf32>", "tensor<24x24xf32>", "tensor<24x24xf32>",
               "contracting_dims = [1] x [0]", "HIGHEST")
    exe, _ = _compile(text)
    x, y = _random((24, 24), np.float32, 0), _random((24, 24), np.float32, 1)
    np.testing.assert_allclose(run_emulated(exe, x, y)[0], x @ y, rtol=1e-5, atol=1e-5)
    right = gemm_calls.operands

    def flipped(step):
        first, second, out = right(step)
        return gemm_calls.Operand(1 - first.op, *list(vars(first).values())[1:]), second, out
    monkeypatch.setattr(gemm_calls, "operands", flipped)
    assert np.abs(run_emulated(exe, x, y)[0] - x @ y).max() > 1e-2


def test_calls_are_captured_in_the_cuda_graph_and_reuse_their_plans():
    text = dot(*(x.format(t="f32", o="f32") for x in LAYOUTS["batched"]), "HIGHEST")
    exe, _ = _compile(text)
    driver = FakeDriver(execute=True, kernels=exe.function.kernels)
    library = FakeCublasLt(driver)
    function = exe.function.with_driver(driver, blas=cublaslt.CublasLt(library))
    x, y = _random((3, 33, 47), np.float32, 0), _random((3, 47, 21), np.float32, 1)
    try:
        for _ in range(3):
            np.testing.assert_allclose(exe.with_function(function).run(x, y)[0], x @ y,
                                       rtol=1e-5, atol=1e-5)
        assert function.in_graph and driver.calls["launch_graph"] >= 1
        assert library.calls["cublasLtMatmulAlgoGetHeuristic"] == 1    # one plan per step
        layouts = library.matmuls[0]["layouts"]
        assert [x["batch"] for x in layouts] == [3, 3, 3, 3]
        assert [x["stride"] for x in layouts] == [47 * 21, 33 * 47, 33 * 21, 33 * 21]
    finally:
        function.close()
    assert library.calls["cublasLtMatmulDescDestroy"] == 1


def test_profiles_and_device_arrays_see_the_library_calls():
    text = dot(*(x.format(t="f32", o="f32") for x in LAYOUTS["batched"]), "HIGHEST")
    exe, (step,) = _compile(text)
    driver = FakeDriver(execute=True, kernels=exe.function.kernels)
    exe.function._driver, exe.function._blas = driver, cublaslt.CublasLt(FakeCublasLt(driver))
    x, y = _random((3, 33, 47), np.float32, 0), _random((3, 47, 21), np.float32, 1)
    result = exe(x, y)                                  # a DeviceArray, computed on the fake
    np.testing.assert_allclose(result.numpy(), x @ y, rtol=1e-5, atol=1e-5)
    rows = exe.profile(x, y, runs=2).kernels()
    (row,) = [r for r in rows if r.name.startswith("cublasLtMatmul")]
    assert row.name == "cublasLtMatmul 3x33x21x47 f32 f32" and row.calls == 2 and row.mean_ms > 0
    exe.function.close()


def test_a_serialized_program_keeps_its_library_calls():
    text = dot("tensor<33x47xf32>", "tensor<21x47xf32>", "tensor<33x21xf32>",
               "contracting_dims = [1] x [1]", "", EPILOGUES["bias_relu"])
    exe, steps = _compile(text)
    again = xlac.deserialize(exe.serialize(), target="cuda")
    assert [s for s in again.function.steps if isinstance(s, Gemm)] == steps
    args = [_random(shape, np.float32, i) for i, shape in enumerate([(33, 47), (21, 47), (21,)])]
    np.testing.assert_array_equal(run_emulated(again, *args)[0], run_emulated(exe, *args)[0])


def test_without_the_library_auto_keeps_the_generated_kernels(monkeypatch):
    monkeypatch.setattr(cublaslt, "library_path", lambda: None)
    text = dot(*(x.format(t="f32", o="f32") for x in LAYOUTS["plain"]))
    for options in (LIBRARY.replace(cuda_contractions="auto"), GENERATED):
        exe, steps = _compile(text, options)
        assert not steps and any(isinstance(s, Launch) for s in exe.function.steps)
        x, y = _random((33, 47), np.float32, 0), _random((47, 21), np.float32, 1)
        np.testing.assert_allclose(run_emulated(exe, x, y)[0], x @ y, rtol=1e-5, atol=1e-5)
    exe, steps = _compile(text, LIBRARY)           # asked for: compiled, and refused at run time
    assert steps
    function = exe.function.with_driver(FakeDriver(execute=True, kernels=exe.function.kernels))
    with pytest.raises(CudaUnavailable, match="XLAC_CUDA_CONTRACTIONS=generated"):
        exe.with_function(function).run(np.zeros((33, 47), np.float32),
                                        np.zeros((47, 21), np.float32))


def test_the_option_and_its_environment_variable():
    assert xlac.Options.from_env({}).cuda_contractions == "auto"
    assert xlac.Options.from_env({"XLAC_CUDA_CONTRACTIONS": "Generated"}).cuda_contractions == "generated"
    assert xlac.Options.from_env({"XLAC_CUDA_CONTRACTIONS": "cublaslt"}).cuda_contractions == "cublaslt"
    assert not cublaslt.uses_library("generated") and cublaslt.uses_library("cublaslt")


def test_the_library_is_found_beside_the_nvidia_wheels(tmp_path, monkeypatch):
    for soname in ("libcublasLt.so.12", "libcublasLt.so.13"):
        root = tmp_path / soname
        (root / "nvidia" / "cublas" / "lib").mkdir(parents=True)
        (root / "nvidia" / "cublas" / "lib" / soname).write_bytes(b"")
        monkeypatch.setattr("sys.path", [str(root)])
        assert cublaslt.library_path() == str(root / "nvidia" / "cublas" / "lib" / soname)


def test_real_cublaslt_on_a_gpu():
    """Needs an NVIDIA GPU, its driver and libcublasLt; skipped (with the reason) without."""
    if cublaslt.library_path() is None:
        pytest.skip("no libcublasLt (pip install nvidia-cublas-cu12, or jax[cuda12] / torch)")
    for kind, dims in (("f32", "HIGHEST"), ("bf16", "")):
        a, b, out, numbers = (x.format(t=kind, o=kind) for x in LAYOUTS["batched_b_transposed"])
        exe, steps = _compile(dot(a, b, out, numbers, dims))
        dtype = np.float32 if kind == "f32" else BF16
        x, y = _random(_shape(a), dtype, 0), _random(_shape(b), dtype, 1)
        try:
            got = exe.run(x, y)[0]
        except CudaUnavailable as exc:
            pytest.skip(f"no GPU: {exc}")
        want = x.astype(np.float64) @ y.astype(np.float64).transpose(0, 2, 1)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-2 if kind == "bf16" else 1e-5,
                                   atol=1e-2 if kind == "bf16" else 1e-4)
    a, b, out, numbers = (x.format(t="f32", o="f32") for x in LAYOUTS["plain"])
    text = dot(a, b, out, numbers, "HIGHEST", EPILOGUES["bias_gelu"])
    exe, (step,) = _compile(text)
    assert step.epilogue == "bias_gelu"                    # the library's GELU is the tanh form
    args = [_random(shape, np.float32, i) for i, shape in enumerate([(33, 47), (47, 21), (21,)])]
    want = xlac.compile(text, target="cpu").run(*args)[0]
    np.testing.assert_allclose(exe.run(*args)[0], want, rtol=1e-4, atol=1e-4)
