"""Concatenates fused into their consumers' loops (a branch per element
between the inputs' reads) run vectorized: xla-speculate-branch-reads makes
the branch a select of reads clamped in bounds. Right on both CPU levels,
whichever dim is joined and however many inputs."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels


def _concat_then_scale(shapes: list[tuple[int, ...]], dim: int) -> str:
    out = list(shapes[0])
    out[dim] = sum(s[dim] for s in shapes)
    t = lambda shape: "tensor<" + "x".join(map(str, shape)) + "xf32>"   # noqa: E731
    args = ", ".join(f"%a{i}: {t(s)}" for i, s in enumerate(shapes))
    operands = ", ".join(f"%a{i}" for i in range(len(shapes)))
    types = ", ".join(t(s) for s in shapes)
    return (f"func.func @main({args}, %scale: {t(out)}) -> {t(out)} {{\n"
            f"  %c = stablehlo.concatenate {operands}, dim = {dim} : ({types}) -> {t(out)}\n"
            f"  %r = stablehlo.multiply %c, %scale : {t(out)}\n"
            f"  return %r : {t(out)}\n}}")


CASES = {
    "class_token": ([(4, 1, 192), (4, 196, 192)], 1),          # ViT's embeddings
    "roll_rows": ([(1, 256), (255, 256)], 0),                  # jnp.roll along rows
    "three_inputs": ([(2, 30, 64), (2, 1, 64), (2, 33, 64)], 1),
    "last_dim": ([(64, 100), (64, 29)], 1),                    # the contiguous dim joined: gathers
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("cpu", ["x86-64-v3", "host"])
def test_fused_concatenate_is_vectorized_and_right(name, cpu):
    shapes, dim = CASES[name]
    exe = xlac.compile(_concat_then_scale(shapes, dim), cpu=cpu, cache=False)
    assert "not scheduled" not in exe.fusion_report()
    assert "scf.if" not in exe.as_text("bufferized")
    if cpu not in runnable_levels(cpu):
        return
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(spec.shape).astype(np.float32) for spec in exe.signature.inputs]
    expected = np.concatenate(inputs[:-1], axis=dim) * inputs[-1]
    np.testing.assert_array_equal(exe(*inputs), expected)


def _roll(shape: tuple[int, int], dim: int, shift: int) -> str:
    """``jnp.roll(x, shift, dim) * 2`` as JAX exports it: two slices of x, joined."""
    rows, cols = shape
    t = lambda r, c: f"tensor<{r}x{c}xf32>"   # noqa: E731
    size = shape[dim]
    cut = size - shift % size
    if dim == 0:
        tail, head = f"[{cut}:{rows}, 0:{cols}]", f"[0:{cut}, 0:{cols}]"
        tail_t, head_t = t(rows - cut, cols), t(cut, cols)
    else:
        tail, head = f"[0:{rows}, {cut}:{cols}]", f"[0:{rows}, 0:{cut}]"
        tail_t, head_t = t(rows, cols - cut), t(rows, cut)
    return (f"func.func @main(%x: {t(rows, cols)}) -> {t(rows, cols)} {{\n"
            f"  %a = stablehlo.slice %x {tail} : ({t(rows, cols)}) -> {tail_t}\n"
            f"  %b = stablehlo.slice %x {head} : ({t(rows, cols)}) -> {head_t}\n"
            f"  %c = stablehlo.concatenate %a, %b, dim = {dim} : ({tail_t}, {head_t}) -> {t(rows, cols)}\n"
            f"  %two = stablehlo.constant dense<2.0> : {t(rows, cols)}\n"
            f"  %r = stablehlo.multiply %c, %two : {t(rows, cols)}\n"
            f"  return %r : {t(rows, cols)}\n}}")


@pytest.mark.parametrize("dim, shift", [(0, 1), (0, -3), (1, -1), (1, 5)])
@pytest.mark.parametrize("cpu", ["x86-64-v3", "host"])
def test_rolls_of_one_tensor_are_right(dim, shift, cpu):
    """The joined inputs are slices of one tensor (strided views once
    bufferized): rolling rows reads each row contiguously; rolling columns
    would gather from a slice, which the vectorizer indexes as if dense, so
    that one stays a branch (scalar loops) and is right too."""
    exe = xlac.compile(_roll((64, 48), dim, shift), cpu=cpu, cache=False)
    if cpu not in runnable_levels(cpu):
        return
    x = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)
    np.testing.assert_array_equal(exe(x), np.roll(x, shift, dim) * 2)


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_column_roll_read_in_its_kernel_stays_in_the_loop(cpu):
    """xla-concatenate-as-slices leaves a roll that its kernel reads: as row
    copies it would be a buffer of its own and end the kernel's loop there
    (a stencil of such rolls ran 1.2-1.3x slower that way)."""
    bufferized = xlac.compile(_roll((64, 48), 1, 1), cpu=cpu, cache=False).as_text("bufferized")
    assert "memref.copy" not in bufferized and "memref.alloc" not in bufferized
