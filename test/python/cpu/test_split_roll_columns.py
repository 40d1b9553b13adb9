"""A stencil of column rolls (jnp.roll along the last axis, fused into its
readers' loop) runs as one loop per stretch of columns: xla-split-roll-columns
folds each pick, the wide stretch reads each slice contiguously (vectorized),
the one-column edges run as small scalar loops. Right on both CPU levels."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels


def _stencil(rows: int, cols: int, last: int) -> str:
    """``(roll(x, -1, 1) - roll(x, 1, 1)) * y``, the rolls as JAX exports them;
    ``last``: the axis the rolls move along (0 rolls rows)."""
    t = lambda r, c: f"tensor<{r}x{c}xf32>"   # noqa: E731
    size = cols if last else rows

    def cut(lo: int, hi: int) -> tuple[str, str]:
        if last:
            return f"[0:{rows}, {lo}:{hi}]", t(rows, hi - lo)
        return f"[{lo}:{hi}, 0:{cols}]", t(hi - lo, cols)

    (a, at), (b, bt) = cut(1, size), cut(0, 1)
    (c, ct), (d, dt) = cut(size - 1, size), cut(0, size - 1)
    full = t(rows, cols)
    return (f"func.func @main(%x: {full}, %y: {full}) -> {full} {{\n"
            f"  %a = stablehlo.slice %x {a} : ({full}) -> {at}\n"
            f"  %b = stablehlo.slice %x {b} : ({full}) -> {bt}\n"
            f"  %l = stablehlo.concatenate %a, %b, dim = {last} : ({at}, {bt}) -> {full}\n"
            f"  %c = stablehlo.slice %x {c} : ({full}) -> {ct}\n"
            f"  %d = stablehlo.slice %x {d} : ({full}) -> {dt}\n"
            f"  %r = stablehlo.concatenate %c, %d, dim = {last} : ({ct}, {dt}) -> {full}\n"
            f"  %s = stablehlo.subtract %l, %r : {full}\n"
            f"  %m = stablehlo.multiply %s, %y : {full}\n"
            f"  return %m : {full}\n}}")


@pytest.mark.parametrize("cpu", ["x86-64-v3", "host"])
@pytest.mark.parametrize("shape", [(64, 48), (5, 19)])
def test_column_roll_stencil_is_split_and_right(shape, cpu):
    exe = xlac.compile(_stencil(*shape, last=1), cpu=cpu, cache=False)
    assert "scf.if" not in exe.as_text("bufferized")
    report = exe.fusion_report()
    assert f"{shape[0]}x{shape[1] - 2}xf32" not in report.split("not scheduled:")[-1]
    if cpu not in runnable_levels(cpu):
        return
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    np.testing.assert_array_equal(exe(x, y), (np.roll(x, -1, 1) - np.roll(x, 1, 1)) * y)


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_row_rolls_stay_one_loop(cpu):
    """A pick along an outer axis is the same for a whole row: not split."""
    linalg = xlac.compile(_stencil(64, 48, last=0), cpu=cpu, cache=False).as_text("linalg")
    assert linalg.count("linalg.generic") == 1
