"""Outer-axis concatenates of computed operands (issue 39): `jnp.stack([a*b,
a+b, a-b])` as slices (xla-concatenate-as-slices), each operand's kernel
writing its block of the result in place (xla-write-blocks-in-place): no
per-element pick loop, no buffer and copy per operand. Structure at
x86-64-v3 and x86-64-v4, numbers bit for bit against numpy where the host
runs the level."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

LEVELS = ("x86-64-v3", "x86-64-v4")

STACK = """func.func @main(%a: tensor<64x96xf32>, %b: tensor<64x96xf32>) -> tensor<3x64x96xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<64x96xf32>
  %1 = stablehlo.add %a, %b : tensor<64x96xf32>
  %2 = stablehlo.subtract %a, %b : tensor<64x96xf32>
  %3 = stablehlo.reshape %0 : (tensor<64x96xf32>) -> tensor<1x64x96xf32>
  %4 = stablehlo.reshape %1 : (tensor<64x96xf32>) -> tensor<1x64x96xf32>
  %5 = stablehlo.reshape %2 : (tensor<64x96xf32>) -> tensor<1x64x96xf32>
  %6 = stablehlo.concatenate %3, %4, %5, dim = 0 : (tensor<1x64x96xf32>, tensor<1x64x96xf32>, tensor<1x64x96xf32>) -> tensor<3x64x96xf32>
  return %6 : tensor<3x64x96xf32>
}"""

# rows of a matrix: an i32 concatenate along dim 0 of two computed operands
ROWS = """func.func @main(%a: tensor<40x24xi32>, %b: tensor<8x24xi32>) -> tensor<48x24xi32> {
  %0 = stablehlo.negate %a : tensor<40x24xi32>
  %1 = stablehlo.multiply %b, %b : tensor<8x24xi32>
  %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<40x24xi32>, tensor<8x24xi32>) -> tensor<48x24xi32>
  return %2 : tensor<48x24xi32>
}"""


def _run(exe, cpu, *arrays):
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code")
    return exe.run(*arrays)[0]


@pytest.mark.parametrize("cpu", LEVELS)
def test_a_stack_of_computed_operands_writes_each_block_in_place(cpu):
    exe = xlac.compile(STACK, cpu=cpu, cache=False)
    bufferized = exe.as_text("bufferized")
    assert "memref.copy" not in bufferized and "memref.alloc" not in bufferized
    assert not re.search(r"scf\.if|tensor\.extract ", exe.as_text("linalg"))   # no per-element pick
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 96)).astype(np.float32) for _ in range(2))
    got = _run(exe, cpu, a, b)
    assert got.tobytes() == np.stack([a * b, a + b, a - b]).tobytes()


@pytest.mark.parametrize("cpu", LEVELS)
def test_rows_of_computed_operands_are_written_in_place(cpu):
    exe = xlac.compile(ROWS, cpu=cpu, cache=False)
    assert "memref.copy" not in exe.as_text("bufferized")
    rng = np.random.default_rng(1)
    a = rng.integers(-1000, 1000, (40, 24)).astype(np.int32)
    b = rng.integers(-1000, 1000, (8, 24)).astype(np.int32)
    got = _run(exe, cpu, a, b)
    assert got.tobytes() == np.concatenate([-a, b * b]).tobytes()


def test_a_stack_read_in_its_kernel_keeps_the_pick():
    """A concatenate an op of its kernel reads stays one element-wise loop."""
    text = STACK.replace("return %6 : tensor<3x64x96xf32>",
                         "%7 = stablehlo.negate %6 : tensor<3x64x96xf32>\n  return %7 : tensor<3x64x96xf32>")
    exe = xlac.compile(text, cpu="x86-64-v3", cache=False)
    a = np.ones((64, 96), np.float32)
    got = _run(exe, "host", a, 2 * a)
    assert got.tobytes() == (-np.stack([2 * a, 3 * a, -a])).tobytes()
