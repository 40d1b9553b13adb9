"""Convolutions as matmuls on the cuda target (xla-gpu-convolutions-as-matmuls):
every stride, padding, dilation, window and layout of the cpu convolution
tests, 1-D and 3-D, bf16 and f64, gradients and a CNN train step, emulated on
both matmul paths (the generated tiled kernel; the fake cuBLASLt) against the
cpu target; which path each convolution took; the fallbacks."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from conv_programs import CASES, program

import xlac
from xlac.targets.cuda.ptx import ptxas
from xlac.targets.cuda.runtime import gemm_name
from xlac.targets.cuda.schedule import Gemm
from xlac_emulator.simt import run_emulated

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")
pytest.importorskip("jax", reason="the cases' shapes come from jax: pip install 'xlac[bench]'")

LIBRARY = xlac.Options.from_env().replace(cuda_contractions="cublaslt", cache_dir="")
GENERATED = LIBRARY.replace(cuda_contractions="generated")
PATHS = {"generated": GENERATED, "cublaslt": LIBRARY}
BF16 = np.dtype(ml_dtypes.bfloat16)

# cases beyond the cpu tests': other spatial ranks, groups, views, f64/bf16 (name: case, element)
EXTRA = {
    "conv1d": (("b0f", "0io", "b0f", (2, 19, 5), (3, 5, 7), {"stride": (2,), "pad": ((1, 1),)}), "f32"),
    "conv3d": (("b012f", "012io", "b012f", (1, 4, 6, 6, 3), (2, 3, 3, 3, 8),
                {"pad": ((0, 0), (1, 1), (1, 1))}), "f32"),
    "pointwise_nhwc": (("b01f", "01io", "b01f", (2, 5, 7, 24), (1, 1, 24, 40), {}), "f32"),
    # a dot after xla-canonicalize-convolutions (more taps than outputs): no convolution left
    "whole_window": (("b01f", "01io", "b01f", (3, 4, 4, 6), (4, 4, 6, 10), {}), "f32"),
    "grouped": (("b01f", "01io", "b01f", (2, 6, 6, 8), (3, 3, 4, 6), {"groups": 2}), "f32"),
    "f64_3x3": (("b01f", "01io", "b01f", (2, 7, 7, 4), (3, 3, 4, 8), {"pad": ((1, 1), (1, 1))}), "f64"),
    "bf16_3x3": (("b01f", "01io", "b01f", (2, 8, 8, 16), (3, 3, 16, 32), {"pad": ((1, 1), (1, 1))}), "bf16"),
    "bf16_stem": (("b01f", "01io", "b01f", (1, 12, 12, 3), (7, 7, 3, 16),
                   {"stride": (2, 2), "pad": ((3, 3), (3, 3))}), "bf16"),
    "bf16_nchw": (("bf01", "oi01", "bf01", (2, 8, 6, 6), (16, 8, 3, 3), {"pad": ((1, 1), (1, 1))}), "bf16"),
}
ALL = {**{name: (case, "f32") for name, case in CASES.items()}, **EXTRA}
_NUMPY = {"f32": np.float32, "f64": np.float64, "bf16": BF16}


def _inputs(case, element: str):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(np.float32).astype(_NUMPY[element]) for shape in case[3:5]]


def _conv_gemms(exe) -> list[str]:
    """The names of the cuBLASLt calls made for convolutions."""
    return [gemm_name(s) for s in exe.function.steps if isinstance(s, Gemm) and s.origin]


def _convolutions_at_linalg(text: str) -> int:
    return xlac.compile(text, target="cuda", options=GENERATED).as_text("linalg").count("linalg.conv_")


# The im2col is the same on both paths, so the generated matmul runs every case only in
# CI's heavy step (the emulator takes minutes over them all on 2 cores); here these kinds:
GENERATED_HERE = {"1x1_stride2", "3x3_stride2", "bf16_3x3", "conv1d", "conv3d", "dilated_kernel",
                  "input_grad_stride2", "pointwise_nhwc", "weight_grad"}
SLOW = {(name, "generated") for name in ALL if name not in GENERATED_HERE}


@pytest.mark.parametrize(("name", "path"), [
    pytest.param(name, path, marks=[pytest.mark.heavy] if (name, path) in SLOW else [])
    for name in sorted(ALL) for path in sorted(PATHS)])
def test_convolution_emulated_matches_cpu(name, path):
    case, element = ALL[name]
    text = program(case, element)
    exe = xlac.compile(text, target="cuda", options=PATHS[path])
    inputs = _inputs(case, element)
    got = run_emulated(exe, *inputs)[0].astype(np.float64)
    want = xlac.compile(text, target="cpu")(*inputs).astype(np.float64)
    # bf16: one rounding of the result (8 bits), sums in f32 in another order than the cpu's
    tolerance = {"bf16": 2e-2, "f32": 1e-4, "f64": 1e-12}[element]
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.abs(want).max())


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_convolution_reaching_the_gpu_stages_is_a_library_matmul(name):
    """On the library path each linalg convolution is a cuBLASLt call named after it,
    but a grouped one, which has no channels-last linalg form: it keeps its kernel;
    a weight gradient split into a matmul per tap is one call too."""
    case, element = ALL[name]
    text = program(case, element)
    convolutions = _convolutions_at_linalg(text)
    names = _conv_gemms(xlac.compile(text, target="cuda", options=LIBRARY))
    gradients = [n for n in names if n.endswith("weight gradient)")]
    assert len(names) - len(gradients) == (0 if name == "grouped" else convolutions), (names, convolutions)
    assert len(gradients) <= 1, names
    assert all(f" {'bf16' if element == 'bf16' else element} " in n for n in names), names


def test_paths_are_named_by_window_and_stride():
    names = {name: _conv_gemms(xlac.compile(program(ALL[name][0], ALL[name][1]), target="cuda",
                                            options=LIBRARY))
             for name in ("pointwise_nhwc", "7x7_stem", "dilated_kernel", "bf16_3x3", "bf16_nchw")}
    assert names["pointwise_nhwc"] == ["cublasLtMatmul 70x40x24 f32 f32 (conv1x1 view)"]
    assert names["7x7_stem"] == ["cublasLtMatmul 100x16x147 f32 f32 (conv7x7/s2 im2col)"]
    assert names["dilated_kernel"] == ["cublasLtMatmul 64x8x72 f32 f32 (conv3x3/d2 im2col)"]
    assert names["bf16_3x3"] == ["cublasLtMatmul 128x32x144 bf16 f32 (conv3x3 im2col)"]
    assert names["bf16_nchw"] == ["cublasLtMatmul 72x16x72 bf16 f32 (conv3x3 im2col)"]


def test_a_view_path_copies_nothing():
    """A 1x1 stride-1 convolution: the matmul reads the input where it lies (one launch:
    nothing but the generated matmul)."""
    case, element = EXTRA["pointwise_nhwc"]
    exe = xlac.compile(program(case, element), target="cuda", options=GENERATED)
    loops = exe.as_text("gpu-loops")
    assert loops.count("gpu.launch ") == 1 and "memref.collapse_shape %arg0" in loops


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_padded_convolution_pads_in_its_im2col(path):
    """A "SAME" 3x3 convolution: the padding is the im2col's bounds check, not a fill
    and a copy before it: the im2col and the GEMM, one kernel each (cuBLASLt: one
    kernel and one call; before, a fill and a copy into a padded buffer came first)."""
    exe = xlac.compile(program(CASES["3x3"], "f32"), target="cuda", options=PATHS[path])
    launches = exe.as_text("gpu").count("gpu.launch_func")
    assert launches == (1 if path == "cublaslt" else 2), launches
    assert "tensor.pad" in exe.as_text("linalg")
    assert "11x11" not in exe.as_text("gpu-loops")       # no padded buffer (2x11x11x8) left


@pytest.mark.parametrize("path", sorted(PATHS))
def test_ptx_of_convolution_gemms_is_accepted_by_ptxas(path):
    for name in ("3x3_stride2", "bf16_3x3", "conv3d", "weight_grad"):   # padded; a gradient in one GEMM
        ptxas(xlac.compile(program(*ALL[name]), target="cuda", options=PATHS[path]).as_text("ptx"))


def _cnn_train_step() -> tuple[str, list[np.ndarray]]:
    """A small CNN's gradient step (jax): conv 3x3 -> relu -> conv 3x3 stride 2 -> relu ->
    dense, mean squared error; the gradients of both filters and the dense weights."""
    import jax
    import jax.numpy as jnp

    def loss(params, x, y):
        h = jax.nn.relu(jax.lax.conv_general_dilated(x, params[0], (1, 1), "SAME",
                                                     dimension_numbers=("NHWC", "HWIO", "NHWC")))
        h = jax.nn.relu(jax.lax.conv_general_dilated(h, params[1], (2, 2), "SAME",
                                                     dimension_numbers=("NHWC", "HWIO", "NHWC")))
        return jnp.mean((h.reshape(h.shape[0], -1) @ params[2] - y) ** 2)

    rng = np.random.default_rng(1)
    shapes = [(3, 3, 3, 8), (3, 3, 8, 16), (4 * 4 * 16, 5)]
    params = [(rng.standard_normal(s) * 0.3).astype(np.float32) for s in shapes]
    x = rng.standard_normal((4, 8, 8, 3)).astype(np.float32)
    y = rng.standard_normal((4, 5)).astype(np.float32)
    text = jax.jit(jax.grad(loss)).lower(params, x, y).as_text()
    return text, [*params, x, y]


@pytest.mark.parametrize("path", [pytest.param("generated", marks=pytest.mark.heavy), "cublaslt"])
def test_cnn_train_step_emulated_matches_cpu(path):
    text, inputs = _cnn_train_step()
    exe = xlac.compile(text, target="cuda", options=PATHS[path])
    got = run_emulated(exe, *inputs)
    want = xlac.compile(text, target="cpu")(*inputs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * np.abs(w).max())
    if path == "cublaslt":
        names = _conv_gemms(exe)
        gradients = [n for n in names if n.endswith("weight gradient)")]
        assert len(names) - len(gradients) == _convolutions_at_linalg(text) >= 3, names
        assert gradients == ["cublasLtMatmul 72x16x64 f32 f32 (conv3x3/s2 im2col weight gradient)",
                             "cublasLtMatmul 27x8x256 f32 f32 (conv3x3 im2col weight gradient)"], names


@pytest.mark.parametrize("path", sorted(PATHS))
def test_weight_gradients_are_one_gemm_per_layer(path):
    """The train step's two weight gradients, split into 9 per-tap matmuls by
    xla-canonicalize-convolutions, are one GEMM each on the GPU (after an im2col):
    each tap's transpose and GEMM (2 launches or a launch and a call) go."""
    text, _ = _cnn_train_step()

    def work(exe):
        gemms = [s for s in exe.function.steps if isinstance(s, Gemm)]
        return exe.as_text("gpu").count("gpu.launch_func") + len(gemms), len(gemms)

    apart = ("xla-gpu-horizontal-launches",)          # each kernel its own launch
    one = work(xlac.compile(text, target="cuda", options=PATHS[path], disable_passes=apart))
    per_tap = work(xlac.compile(text, target="cuda", options=PATHS[path],
                                disable_passes=apart + ("xla-gpu-weight-gradients-as-one-matmul",)))
    assert one[0] <= per_tap[0] - 2 * 9 * 2 + 2 * 3, (one, per_tap)   # 36 per-tap steps -> 3 a layer at most
    if path == "cublaslt":
        assert one[1] == per_tap[1] - 2 * 9 + 2, (one, per_tap)


def _resnet_block() -> tuple[str, list[np.ndarray]]:
    """ResNet's downsampling block (jax, inference): 3x3/s2 conv, a per-channel scale and
    shift (batch norm folded), relu, 3x3 conv, plus the 1x1/s2 shortcut: epilogues reading
    the convolutions' matmuls through their reshapes, three patch matrices in one scratch."""
    import jax

    def conv(x, w, stride):
        return jax.lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def block(x, w1, w2, w3, scale, shift):
        h = jax.nn.relu(conv(x, w1, 2) * scale + shift)
        return jax.nn.relu(conv(h, w2, 1) * scale + shift + conv(x, w3, 2))

    rng = np.random.default_rng(2)
    shapes = [(2, 8, 8, 4), (3, 3, 4, 8), (3, 3, 8, 8), (1, 1, 4, 8), (8,), (8,)]
    inputs = [(rng.standard_normal(s) * 0.5).astype(np.float32) for s in shapes]
    return jax.jit(block).lower(*inputs).as_text(), inputs


@pytest.mark.parametrize("path", sorted(PATHS))
def test_resnet_block_emulated_matches_cpu(path):
    text, inputs = _resnet_block()
    exe = xlac.compile(text, target="cuda", options=PATHS[path])
    got = run_emulated(exe, *inputs)[0]
    want = xlac.compile(text, target="cpu")(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())
    loops = exe.as_text("gpu-loops")
    assert loops.count("memref.reinterpret_cast") >= 2, "the patch matrices share one buffer"
