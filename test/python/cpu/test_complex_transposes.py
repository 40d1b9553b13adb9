"""Transposes of complex numbers move as pairs of their parts in register
blocks (pair_transpose_plan.py): the same bytes as numpy's transpose, bit for
bit, at every CPU level, and a block schedule, not a scalar loop on
complex<f32> or a pair-by-pair walk. Small shapes: the blocks are what is
checked, not the speed (bench/sweep.py --classes transpose --types c64,c128)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

LEVELS = ("x86-64-v2", "x86-64-v3", "x86-64-v4")
_TYPES = {"complex<f32>": np.complex64, "complex<f64>": np.complex128}


def _transpose(element: str, shape: tuple[int, ...], perm: tuple[int, ...]) -> str:
    ins = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    out = f"tensor<{'x'.join(str(shape[p]) for p in perm)}x{element}>"
    return (f"func.func @main(%a: {ins}) -> {out} {{\n"
            f"  %0 = stablehlo.transpose %a, dims = {list(perm)} : ({ins}) -> {out}\n"
            f"  return %0 : {out}\n}}")


def _values(element: str, shape: tuple[int, ...]) -> np.ndarray:
    """Parts no arithmetic would keep: NaN payloads, -0.0, subnormals, infinities."""
    rng = np.random.default_rng(0)
    part = np.float32 if element == "complex<f32>" else np.float64
    bits = np.dtype(part).itemsize * 8
    raw = rng.integers(0, 2 ** bits - 1, size=(*shape, 2), dtype=np.uint64, endpoint=True)
    parts = raw.astype(np.dtype(f"u{bits // 8}")).view(part)
    return np.ascontiguousarray(parts).view(_TYPES[element]).reshape(shape)


CASES = [  # (shape, permutation): the two innermost swapped, 2-D, a 3-D inner, an outer swap
    ((64, 128), (1, 0)),
    ((4, 32, 64), (0, 2, 1)),
    ((32, 4, 64), (2, 1, 0)),
    ((24, 20), (1, 0)),            # multiples of 4, not of 8
]


@pytest.mark.parametrize("element", sorted(_TYPES))
@pytest.mark.parametrize("shape,perm", CASES)
@pytest.mark.parametrize("cpu", LEVELS)
def test_complex_transpose_is_numpys_bit_for_bit(cpu, shape, perm, element):
    exe = xlac.compile(_transpose(element, shape, perm), cpu=cpu)
    bufferized = exe.as_text("bufferized")
    assert "complex<" not in bufferized, "the transpose stayed on complex elements"
    assert re.search(r"vector<(1x)*4x(1x)*4x2xf", bufferized), "no 4x4 block of pairs"
    assert "scalar loops" not in (exe.fusion_report() or "")
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code")
    x = _values(element, shape)
    (got,) = exe.run(x)
    want = np.ascontiguousarray(np.transpose(x, perm))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("shape,perm", [((6, 8), (1, 0)), ((2, 2, 4, 8), (0, 1, 3, 2))])
def test_c64_transpose_without_pair_blocks_stays_complex_and_exact(shape, perm):
    """Swapped dims no multiple of 4, or a 4-D c64 (5-D as pairs: no block
    schedule of that rank): 8-byte scalars, as before; still the same bytes."""
    exe = xlac.compile(_transpose("complex<f32>", shape, perm), cpu="x86-64-v3")
    assert "complex<f32>" in exe.as_text("bufferized")
    x = _values("complex<f32>", shape)
    (got,) = exe.run(x)
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(np.transpose(x, perm)).view(np.uint8))


def _converted_transpose(source: str, target: str, shape: tuple[int, int]) -> str:
    ins = f"tensor<{shape[0]}x{shape[1]}x{source}>"
    moved = f"tensor<{shape[1]}x{shape[0]}x{source}>"
    out = f"tensor<{shape[1]}x{shape[0]}x{target}>"
    return (f"func.func @main(%a: {ins}) -> {out} {{\n"
            f"  %t = stablehlo.transpose %a, dims = [1, 0] : ({ins}) -> {moved}\n"
            f"  %0 = stablehlo.convert %t : ({moved}) -> {out}\n"
            f"  return %0 : {out}\n}}")


@pytest.mark.parametrize("source,target", [("complex<f64>", "complex<f32>"),
                                           ("complex<f32>", "complex<f64>")])
@pytest.mark.parametrize("cpu", ("x86-64-v3", "x86-64-v4"))
def test_convert_of_a_complex_transpose_moves_blocks_of_pairs(cpu, source, target):
    """`x.T.astype(c64)` fuses into one elementwise kernel reading its operand
    transposed as pairs (loops [1, 0, 2]): it gets the 4x4 blocks of pairs as
    a plain transpose does, not a walk of the output pair by pair, one
    2-lane read a row (the sweep's c128 convert transposed 1.69 ms, 1.5x
    XLA, on Zen 4). Converted as numpy converts, bit for bit."""
    shape = (64, 96)
    exe = xlac.compile(_converted_transpose(source, target, shape), cpu=cpu)
    bufferized = exe.as_text("bufferized")
    part = "f64" if source == "complex<f64>" else "f32"
    assert re.search(rf"vector.transfer_read .* vector<4x4x2x{part}>", bufferized), "no 4x4 block of pairs"
    assert not re.search(rf"vector.transfer_read .* vector<2x{part}>", bufferized), "read pair by pair"
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code")
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(_TYPES[source])
    (got,) = exe.run(x)
    want = np.ascontiguousarray(x.T.astype(_TYPES[target]))
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("cpu", ("x86-64-v3", "x86-64-v4"))
def test_even_sides_no_multiple_of_4_move_2x2_blocks_of_pairs(cpu):
    """Swapped dims even but no multiple of 4 (fft2's 270): 2 x 2 blocks of
    pairs instead of the pair-by-pair walk; the same bytes as numpy."""
    shape, perm = (26, 30), (1, 0)
    exe = xlac.compile(_transpose("complex<f64>", shape, perm), cpu=cpu)
    bufferized = exe.as_text("bufferized")
    assert re.search(r"vector<(1x)*2x(1x)*2x2xf64>", bufferized), "no 2x2 block of pairs"
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code")
    x = _values("complex<f64>", shape)
    (got,) = exe.run(x)
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(np.transpose(x, perm)).view(np.uint8))
