"""Two patterns real models hand the compiler, each against jax on the cpu target
and compiled for cuda (kernels run by the SIMT emulator, against the cpu target):
the weight gradient of a stride-2 1x1 convolution, whose StableHLO crops the
input with negative padding (ResNet's downsampling shortcut), and bf16
attention, whose K^T the cuda matmul kernel reads through a collapse of the
heads into the batch."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac_emulator.simt import run_emulated

jax = pytest.importorskip("jax", reason="the programs come from jax: pip install 'xlac[bench]'")
jnp = jax.numpy


def _shortcut_loss(w, x):
    """A stride-2 1x1 convolution, NHWC x HWIO, as flax writes ResNet's shortcut."""
    y = jax.lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jnp.sum(y * y)


def _attend(q, k, v):
    """Multi-head attention as a model writes it: bf16 matmuls, softmax in f32."""
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k).astype(jnp.float32) / np.sqrt(q.shape[-1])
    weights = jax.nn.softmax(scores, axis=-1).astype(jnp.bfloat16)
    return jnp.einsum("bhqk,bhkd->bhqd", weights, v)


def _shortcut_case():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((1, 1, 8, 16)).astype(np.float32)
    x = rng.standard_normal((2, 8, 8, 8)).astype(np.float32)
    return jax.jit(jax.value_and_grad(_shortcut_loss)).lower(w, x), (w, x)


def _attention_case():
    rng = np.random.default_rng(1)
    q, k, v = (jnp.asarray(rng.standard_normal((1, 2, 32, 8)), jnp.bfloat16) for _ in range(3))
    return jax.jit(_attend).lower(q, k, v), (q, k, v)


def test_strided_1x1_weight_gradient_has_negative_padding():
    """The pattern is what the test means it to be: jax crops with negative padding."""
    lowered, _ = _shortcut_case()
    assert "pad = [[0, -1], [0, -1]]" in lowered.as_text()


def test_strided_1x1_weight_gradient_matches_jax_on_cpu():
    lowered, args = _shortcut_case()
    got = xlac.compile(lowered, cache=False)(*args)
    want = jax.jit(jax.value_and_grad(_shortcut_loss))(*args)
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-3)


def test_attention_bf16_matches_jax_on_cpu():
    lowered, args = _attention_case()
    (got,) = jax.tree_util.tree_leaves(xlac.compile(lowered, cache=False)(*args))
    want = jax.jit(_attend)(*args)
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                               rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("case", [_shortcut_case, _attention_case], ids=["shortcut_grad", "attention"])
def test_pattern_emulated_on_cuda_matches_cpu(case):
    lowered, args = case()
    text = lowered.as_text()
    cuda, cpu = xlac.compile(text, target="cuda", cache=False), xlac.compile(text, cache=False)
    inputs = [np.asarray(a) for a in args]
    got, want = run_emulated(cuda, *inputs), cpu.run(*inputs)
    for g, e in zip(got, jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g, np.float32), np.asarray(e, np.float32),
                                   rtol=2e-2, atol=2e-2)
