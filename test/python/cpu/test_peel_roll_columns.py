"""Rolls along the last axis (jnp.roll: a concatenate of two slices, fused
into its reader's loop) run as vector code: xla-peel-roll-columns splits the
rows among the threads and peels each chunk's columns into stretches in which
every read is a contiguous slice. A roll moves values: the results are the
reference interpreter's bit for bit, at AVX2 and AVX-512 alike."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server


def _rolls(rows: int, cols: int, shifts: tuple[int, int]) -> str:
    """``(roll(x, s0, 1) - roll(x, s1, 1)) * y``, each roll as JAX exports it:
    the last s columns, then the others."""
    t = lambda c: f"tensor<{rows}x{c}xf32>"   # noqa: E731
    full = t(cols)
    lines = [f"func.func @main(%x: {full}, %y: {full}) -> {full} {{"]
    for name, shift in zip("pq", shifts):
        keep = cols - shift
        lines += [f"  %{name}a = stablehlo.slice %x [0:{rows}, {keep}:{cols}] : ({full}) -> {t(shift)}",
                  f"  %{name}b = stablehlo.slice %x [0:{rows}, 0:{keep}] : ({full}) -> {t(keep)}",
                  f"  %{name} = stablehlo.concatenate %{name}a, %{name}b, dim = 1 : "
                  f"({t(shift)}, {t(keep)}) -> {full}"]
    lines += [f"  %s = stablehlo.subtract %p, %q : {full}",
              f"  %m = stablehlo.multiply %s, %y : {full}",
              f"  return %m : {full}", "}"]
    return "\n".join(lines)


_OPTIONS = xlac.Options(num_threads=2)      # rows split among two threads on any machine
# (rows, width, the two shifts): by 1 and by width - 1 (the shallow-water
# step's), by amounts no multiple of 8 or 16 lanes, a width under one vector
CASES = [(256, 256, (1, 255)), (512, 40, (3, 13)), (1024, 5, (1, 4)), (300, 19, (18, 7))]


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}x{c[1]}-by-{c[2][0]}-{c[2][1]}")
def test_column_rolls_are_vector_code_and_bitwise_the_reference(case, cpu):
    rows, cols, shifts = case
    text = _rolls(rows, cols, shifts)
    exe = xlac.compile(text, cpu=cpu, cache=False, options=_OPTIONS)
    assert "scf.if" not in exe.fusion_report(), exe.fusion_report()
    if cpu not in runnable_levels(cpu):
        return
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    (want,) = shared_server().run(text.encode(), [x, y])
    got = exe(x, y)
    np.testing.assert_array_equal(got.view(np.uint32), np.asarray(want).view(np.uint32))
    np.testing.assert_array_equal(got, (np.roll(x, shifts[0], 1) - np.roll(x, shifts[1], 1)) * y)


def test_the_wide_column_roll_is_one_kernel_of_stretches():
    """The shallow-water form at x86-64-v3 (8 lanes): one scf.forall over the
    rows holds the stretches [0, 1), [1, 249), [249, 255), [255, 256) (no
    kernel of its own per stretch, no masked vector in the long one)."""
    text = _rolls(256, 256, (1, 255))
    scheduled = xlac.compile(text, cpu="x86-64-v3", cache=False,
                             options=_OPTIONS).as_text("bufferized")
    assert scheduled.count("scf.forall") == 1
    assert "vector.transfer_read" in scheduled or "vector.load" in scheduled
    assert "vector.gather" not in scheduled and "vector.mask" not in scheduled
