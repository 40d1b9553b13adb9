"""A convolution's batch norm/relu(/residual) as its generated GEMM's epilogue.

The convolution is an im2col and a GEMM whose 2-D result the batch norm reads
through a 4-D view; `xla-gpu-epilogue-in-place` computes such an epilogue on the
GEMM's rows instead (`conv_epilogue_rows.py`), so the matmul kernel applies it to
each output before the store: two launches a convolution, not three.
"""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.targets.cuda.ptx import ptxas
from xlac_emulator.simt import run_emulated

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")
pytest.importorskip("jax", reason="the programs come from jax: pip install 'xlac[bench]'")

GENERATED = xlac.Options.from_env().replace(cuda_contractions="generated", cache_dir="")
LIBRARY = GENERATED.replace(cuda_contractions="cublaslt")


def _conv(x, w):
    import jax
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _batch_norm(y, mean, var, gamma, beta):
    import jax
    return (y - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta


def _conv_bn_relu(x, w, mean, var, gamma, beta):
    import jax
    return jax.nn.relu(_batch_norm(_conv(x, w), mean, var, gamma, beta))


def _conv_bn_residual_relu(x, w, mean, var, gamma, beta, residual):
    import jax
    return jax.nn.relu(_batch_norm(_conv(x, w), mean, var, gamma, beta) + residual)


def _program(function, with_residual: bool) -> tuple[str, list[np.ndarray]]:
    import jax
    rng = np.random.default_rng(5)
    shapes = [(2, 6, 6, 8), (3, 3, 8, 16), (16,), (16,), (16,), (16,)]
    shapes += [(2, 6, 6, 16)] if with_residual else []
    inputs = [(rng.standard_normal(s) * 0.5).astype(np.float32) for s in shapes]
    inputs[3] = np.abs(inputs[3]) + 0.5                       # a variance
    return jax.jit(function).lower(*inputs).as_text(), inputs


PROGRAMS = {"bn_relu": (_conv_bn_relu, False), "bn_residual_relu": (_conv_bn_residual_relu, True)}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_batch_norm_runs_in_the_gemm_kernel_and_matches_cpu(name):
    text, inputs = _program(*PROGRAMS[name])
    exe = xlac.compile(text, target="cuda", options=GENERATED)
    launches = exe.as_text("gpu").count("gpu.launch_func")
    assert launches == 2, f"im2col and the GEMM with its epilogue, got {launches} launches"
    got = run_emulated(exe, *inputs)[0]
    want = xlac.compile(text, target="cpu")(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
    ptxas(exe.as_text("ptx"))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_library_path_keeps_its_batch_norm_kernel_and_matches_cpu(name):
    """cuBLASLt has no batch-norm epilogue: the call, then a kernel on the 4-D view."""
    text, inputs = _program(*PROGRAMS[name])
    exe = xlac.compile(text, target="cuda", options=LIBRARY)
    gpu = exe.as_text("gpu")
    assert gpu.count("gpu.launch_func") == 2 and gpu.count("call @xla_gemm_") == 1, \
        "im2col, the cuBLASLt call, the batch norm's kernel"
    got = run_emulated(exe, *inputs)[0]
    want = xlac.compile(text, target="cpu")(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
