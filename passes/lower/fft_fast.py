"""Cooley-Tukey FFT stages written as StableHLO for xla-lower-fft.

Why: the direct DFT is O(N^2) per dimension (85-580x XLA at 1 MB inputs).
Here an axis of length N = N1 * N2 becomes the four-step transform
  X[k1 + N1*k2] = sum_n2 W_N2^(n2*k2) * W_N^(n2*k1) * sum_n1 x[N2*n1 + n2] W_N1^(n1*k1)
written with reshape/transpose, one real matmul by a small (2*N1 x 2*N1) DFT
matrix constant, an elementwise twiddle multiply, and the same again for N2
(recursively), so the work runs on the register-tiled dot path and stays
O(N log N). Complex values travel as pairs on a trailing axis of size 2
(a real matmul does a complex one: [xr xi] @ [[c s] [-s c]]), stored as f64,
or as f32 for single precision: each pass then widens its input, multiplies
in f64 and rounds once (`compute`), except a last level of <= F32_LEAF
points, which runs in f32 (`_leaf_f32`). Twiddles come from the exact
quadrant-reduced f64 tables. Where the radix is a multiple of 4 and the
constant small, a level's twiddles are folded into its DFT matrices (one
per n2, a matmul batched over n2: `folds_twiddle`), so no twiddle pass.
An axis of PLANAR_BATCH or more transforms whose length factors into radices
<= 16 (and primes <= 23) runs instead as radix butterfly stages on planes
(fft_stages): one vector kernel per stage, no matmuls.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from xlac.dtypes import tensor_type
from xlac.passes.lower.fft_chirp import ChirpZ
from xlac.passes.lower.fft_plan import FAST_FROM, fast_plan, folds_twiddle
from xlac.passes.lower.fft_real import RealSpectrum
from xlac.passes.lower.fft_stages import PlanarStages, stage_plan

#: Longest last level of a single-precision plan computed in f32.
F32_LEAF = 8
#: Fewest transforms (the minor run of the planes) for the butterfly stages
#: (ms, stages / matmuls, load 14: 2 x 1024 0.018 / 0.046, 4 x 720 0.030 /
#: 0.086, 4 x 4096 0.055 / 0.221). One transform would gain too (1 x 4096
#: 0.034 / 0.102, 1 x 720 0.011 / 0.009) but keeps the matmul levels here: the
#: only way left to them for the lengths that have a stage plan.
PLANAR_BATCH = 2


class FastStage(RealSpectrum, ChirpZ, PlanarStages):
    """Emits one fast transform along an axis into a helper's lines."""

    def __init__(self, emit: Callable[..., None], fresh: Callable[[str], str],
                 twiddles: Callable[[int, int], tuple[np.ndarray, np.ndarray]],
                 real: str = "f64", compute: str | None = None):
        self._emit, self._fresh, self._twiddles = emit, fresh, twiddles
        self.real, self.complex = real, f"complex<{real}>"
        # The arithmetic's type: matmuls and twiddles may run wider than the
        # values stored between passes (f32 pairs, f64 sums and products).
        self.compute = compute or real
        # whether planar may pad the transforms (fft_stages.padded_batch)
        self.pads = True
        # a factor the butterfly stages multiply the result by (IFFT's 1/N),
        # 1.0 once they have (then the caller's scaling pass is not needed)
        self.scale = 1.0
        # where the Rader stages call FFT micro-kernels: notes each one called (else None)
        self.declare = None

    def _t(self, shape: list[int], element: str | None = None) -> str:
        return tensor_type(shape, element or self.real)

    def _hex(self, values: np.ndarray) -> str:
        """Exact f64 values rounded once to the arithmetic's type, as raw bytes."""
        dtype = "<f8" if self.compute == "f64" else "<f4"
        data = np.ascontiguousarray(values, dtype=np.float64).astype(dtype)
        return '"0x' + data.tobytes().hex().upper() + '"'

    def stage(self, value: str, shape: list[int], axis: int, kind: str, size: int,
              sign: int, real_in: bool = False) -> tuple[str, list[int]]:
        """Like _Fft._stage: c2c, r2c (f64 in) or c2r (f64 out) along ``axis``.
        ``real_in``: a c2c transform whose input is real (an FFT of a convert
        of reals): its pairs are built from the reals and zeros, so no complex
        tensor comes before the transform."""
        rank = len(shape)
        self.pads = axis == rank - 1
        plan = stage_plan(size, math.prod(shape)) if kind == "c2c" and axis < rank - 1 and size >= FAST_FROM \
            and math.prod(shape[:axis]) == 1 and math.prod(shape) // size >= PLANAR_BATCH else None
        if plan is not None:
            if real_in:
                value = self._op("convert", value, self._t(shape), self._t(shape, self.complex))
            return self.leading_axis(value, shape, size, sign, plan), shape
        perm = [d for d in range(rank) if d != axis] + [axis]
        moved = [shape[d] for d in perm]
        batch = math.prod(moved[:-1])
        element = self.real if kind == "r2c" or real_in else self.complex
        value = self._op("transpose", value, self._t(shape, element), self._t(moved, element),
                         f", dims = {perm}") if axis != rank - 1 else value
        flat = self._reshape(value, [batch, moved[-1]], element, moved)
        n_out = size // 2 + 1 if kind == "r2c" else size
        out_element = self.real if kind == "c2r" else self.complex
        stages = self.stages_of(batch, size) if real_in else None
        if kind != "c2c" and size % 2 == 0:            # fft_real: half the work
            flat = self.half_length(flat, batch, kind, size, sign)
        elif stages is not None:                        # the reals' planes, zero imaginary rows
            pairs = self.planar(flat, batch, size, sign, stages, reals=True)
            flat = self._from_pairs(pairs, batch, size, n_out, out_element)
        else:
            pairs = self._to_pairs(flat, batch, moved[-1], "r2c" if real_in else kind, size)
            pairs = self._transform(pairs, batch, size, sign)
            flat = self._from_pairs(pairs, batch, size, n_out, out_element)
        moved_out = moved[:-1] + [n_out]
        out = self._reshape(flat, moved_out, out_element, [batch, n_out])
        out_shape = shape[:axis] + [n_out] + shape[axis + 1:]
        if axis != rank - 1:
            back = [perm.index(d) for d in range(rank)]
            out = self._op("transpose", out, self._t(moved_out, out_element),
                           self._t(out_shape, out_element), f", dims = {back}")
        return out, out_shape

    # ---- layout: (B, N) complex or real <-> (B, N, 2) f64 pairs ----

    def _to_pairs(self, flat: str, batch: int, n_in: int, kind: str, size: int) -> str:
        if kind == "r2c":
            real = self._reshape(flat, [batch, size, 1], self.real, [batch, size])
            zero = self._fresh("zero")
            self._emit(f"{zero} = stablehlo.constant dense<0.0> : {self._t([batch, size, 1])}")
            return self._concat([real, zero], [batch, size, 2], 2)
        parts = []
        for part in ("real", "imag"):
            p = self._op(part, flat, self._t([batch, n_in], self.complex), self._t([batch, n_in]))
            parts.append(self._reshape(p, [batch, n_in, 1], self.real, [batch, n_in]))
        pairs = self._concat(parts, [batch, n_in, 2], 2)
        return self._hermitian(pairs, batch, n_in, size) if kind == "c2r" else pairs

    def _hermitian(self, half: str, batch: int, n_in: int, size: int) -> str:
        """X[k] = conj(X[size-k]) for the omitted k > size/2 (IRFFT's input)."""
        missing = size - n_in
        if missing == 0:
            return half
        tail = self._slice(half, [batch, n_in, 2], [0, 1, 0], [batch, missing + 1, 2])
        shape = [batch, missing, 2]
        rev = self._op("reverse", tail, self._t(shape), self._t(shape), ", dims = [1]")
        conj = self._fresh("conj")
        self._emit(f"{conj}_c = stablehlo.constant dense<[1.0, -1.0]> : {self._t([2])}",
                   f"{conj}_b = stablehlo.broadcast_in_dim {conj}_c, dims = [2] : "
                   f"({self._t([2])}) -> {self._t(shape)}",
                   f"{conj} = stablehlo.multiply {rev}, {conj}_b : {self._t(shape)}")
        out = self._fresh("cat")
        self._emit(f"{out} = stablehlo.concatenate {half}, {conj}, dim = 1 : "
                   f"({self._t([batch, n_in, 2])}, {self._t(shape)}) -> {self._t([batch, size, 2])}")
        return out

    def _from_pairs(self, pairs: str, batch: int, size: int, n_out: int,
                    element: str) -> str:
        parts = []
        for index in ((0,) if element == self.real else (0, 1)):
            part = self._slice(pairs, [batch, size, 2], [0, 0, index], [batch, n_out, index + 1])
            parts.append(self._reshape(part, [batch, n_out], self.real, [batch, n_out, 1]))
        if element == self.real:
            return parts[0]
        out = self._fresh("cplx")
        self._emit(f"{out} = stablehlo.complex {parts[0]}, {parts[1]} : "
                   f"{self._t([batch, n_out], element)}")
        return out

    # ---- the transform on (B, N, 2) pairs ----

    def stages_of(self, batch: int, size: int) -> list[int] | None:
        """The butterfly stages _transform runs ``batch`` transforms of ``size`` in, or None."""
        return None if size < FAST_FROM or batch < PLANAR_BATCH else stage_plan(size, batch * size)

    def _transform(self, x: str, batch: int, size: int, sign: int, inner: bool = False) -> str:
        stages = None if inner else self.stages_of(batch, size)
        if stages is not None:
            return self.planar(x, batch, size, sign, stages)
        plan = fast_plan(size) if size >= FAST_FROM else [size]
        if plan is None:                              # a prime factor > MAX_PRIME
            return self.chirp_z(x, batch, size, sign)
        if len(plan) == 1:
            if inner and self.real == "f32" and size <= F32_LEAF:
                return self._leaf_f32(x, batch, size, sign)
            return self._narrow(self._direct(x, batch, size, sign), [batch, size, 2])
        n1, n2 = plan[0], size // plan[0]
        split = self._reshape(x, [batch, n1, n2, 2], self.real, [batch, size, 2])
        if folds_twiddle(n1, n2, self.compute):
            rows = self._twiddled_dft(split, batch, n1, n2, sign)   # (B, k1, n2, 2)
        else:
            cols = self._swap(split, [batch, n1, n2, 2])             # (B, n2, n1, 2)
            inner = self._direct(self._reshape(cols, [batch * n2, n1, 2], self.real,
                                               [batch, n2, n1, 2]), batch * n2, n1, sign)
            twiddled = self._twiddle(self._reshape(inner, [batch, n2, n1, 2], self.compute,
                                                   [batch * n2, n1, 2]), batch, n1, n2, sign)
            rows = self._swap(twiddled, [batch, n2, n1, 2])          # (B, k1, n2, 2)
        outer = self._transform(self._reshape(rows, [batch * n1, n2, 2], self.real,
                                              [batch, n1, n2, 2]), batch * n1, n2, sign, True)
        grid = self._reshape(outer, [batch, n1, n2, 2], self.real, [batch * n1, n2, 2])
        return self._reshape(self._swap(grid, [batch, n1, n2, 2]), [batch, size, 2], self.real,
                             [batch, n2, n1, 2])                     # k = k1 + n1*k2

    def _leaf_f32(self, x: str, batch: int, size: int, sign: int) -> str:
        """The last level of a plan, if short, in f32 arithmetic: sums of
        2*size products, whose rounding keeps the whole transform below
        XLA's error where a longer leaf or a second f32 level did not
        (docs/PERFORMANCE.md); the f32 matmul runs twice the lanes and
        needs no widening of its input."""
        wide, self.compute = self.compute, "f32"
        try:
            return self._direct(x, batch, size, sign)
        finally:
            self.compute = wide

    def _convert(self, value: str, shape: list[int], source: str, target: str) -> str:
        if source == target:
            return value
        return self._op("convert", value, self._t(shape, source), self._t(shape, target))

    def _narrow(self, value: str, shape: list[int]) -> str:
        """The arithmetic's result rounded to the stored type."""
        return self._convert(value, shape, self.compute, self.real)

    def _direct(self, x: str, batch: int, size: int, sign: int) -> str:
        """One matmul by the (2*size x 2*size) real form of the DFT matrix, in the
        arithmetic's type (the result is left there: the twiddle follows)."""
        cos, sin = self._twiddles(size, sign)
        m = np.outer(np.arange(size), np.arange(size)) % size
        c, s = cos[m], sin[m]
        matrix = np.empty((size, 2, size, 2))
        matrix[:, 0, :, 0], matrix[:, 0, :, 1] = c, s
        matrix[:, 1, :, 0], matrix[:, 1, :, 1] = -s, c
        wide = [2 * size, 2 * size]
        flat = self._reshape(x, [batch, 2 * size], self.real, [batch, size, 2])
        flat = self._convert(flat, [batch, 2 * size], self.real, self.compute)
        dft = self._fresh("dftm")
        ct = self.compute
        self._emit(f"{dft}_m = stablehlo.constant dense<{self._hex(matrix)}> : {self._t(wide, ct)}",
                   f"{dft} = stablehlo.dot_general {flat}, {dft}_m, contracting_dims = "
                   f"[1] x [0] : ({self._t([batch, 2 * size], ct)}, {self._t(wide, ct)}) -> "
                   f"{self._t([batch, 2 * size], ct)}")
        return self._reshape(dft, [batch, size, 2], ct, [batch, 2 * size])

    def _twiddled_dft(self, split: str, batch: int, n1: int, n2: int, sign: int) -> str:
        """(B, n1, n2, 2) -> (B, k1, n2, 2): the n1-point DFTs and the twiddles as
        one matmul batched over n2, by M[n2] = [[c s] [-s c]] with c + i s =
        W_N^(k1*(n2 + n2_count*n1)), the product of the DFT entry and the twiddle
        taken exactly from the length-N table (no twiddle pass)."""
        size = n1 * n2
        cos, sin = self._twiddles(size, sign)
        m = (np.arange(n2)[:, None, None] + n2 * np.arange(n1)[None, :, None]) \
            * np.arange(n1)[None, None, :] % size                  # (n2, n1, k1)
        c, s = cos[m], sin[m]
        matrix = np.empty((n2, n1, 2, n1, 2))
        matrix[:, :, 0, :, 0], matrix[:, :, 0, :, 1] = c, s
        matrix[:, :, 1, :, 0], matrix[:, :, 1, :, 1] = -s, c
        ct, wide = self.compute, [n2, 2 * n1, 2 * n1]
        cols = self._op("transpose", split, self._t([batch, n1, n2, 2]),
                        self._t([n2, batch, n1, 2]), ", dims = [2, 0, 1, 3]")
        flat = self._reshape(cols, [n2, batch, 2 * n1], self.real, [n2, batch, n1, 2])
        flat = self._convert(flat, [n2, batch, 2 * n1], self.real, ct)
        dft = self._fresh("twdft")
        out = [n2, batch, 2 * n1]
        self._emit(f"{dft}_m = stablehlo.constant dense<{self._hex(matrix)}> : {self._t(wide, ct)}",
                   f"{dft} = stablehlo.dot_general {flat}, {dft}_m, batching_dims = [0] x [0], "
                   f"contracting_dims = [2] x [1] : ({self._t(out, ct)}, {self._t(wide, ct)}) -> "
                   f"{self._t(out, ct)}")
        pairs = self._narrow(self._reshape(dft, [n2, batch, n1, 2], ct, out), [n2, batch, n1, 2])
        return self._op("transpose", pairs, self._t([n2, batch, n1, 2]),
                        self._t([batch, n1, n2, 2]), ", dims = [1, 2, 0, 3]")

    def _twiddle(self, x: str, batch: int, n1: int, n2: int, sign: int) -> str:
        """x[b, n2, k1] * W_N^(n2*k1) (x in the arithmetic's type), W from the
        exact length-N table."""
        cos, sin = self._twiddles(n1 * n2, sign)
        m = np.outer(np.arange(n2), np.arange(n1)) % (n1 * n2)
        return self.times_table(x, [batch, n2, n1, 2], cos[m] + 1j * sin[m], self.compute)

    def times_table(self, x: str, shape: list[int], table: np.ndarray,
                    source: str | None = None) -> str:
        """Pairs x (B, ..., 2) times a complex table (shape[1:-1]), rounded to
        the stored type: x * [c, c] + swap(x) * [-s, s], so every operand is
        used once and the whole multiply fuses into one loop (no broadcast
        materialized)."""
        ct, rank = self.compute, len(shape)
        wide = self._convert(x, shape, source or self.real, ct)
        tp = self._t(shape, ct)
        swapped = self._op("reverse", wide, tp, tp, f", dims = [{rank - 1}]")
        rows = shape[1:]
        w = self._fresh("tw")
        for name, values in (("c", np.stack([table.real] * 2, -1)),
                             ("s", np.stack([-table.imag, table.imag], -1))):
            self._emit(f"{w}_{name}0 = stablehlo.constant dense<{self._hex(values)}> : "
                       f"{self._t(rows, ct)}",
                       f"{w}_{name} = stablehlo.broadcast_in_dim {w}_{name}0, dims = "
                       f"{list(range(1, rank))} : ({self._t(rows, ct)}) -> {tp}")
        self._emit(f"{w}_xc = stablehlo.multiply {wide}, {w}_c : {tp}",
                   f"{w}_xs = stablehlo.multiply {swapped}, {w}_s : {tp}",
                   f"{w} = stablehlo.add {w}_xc, {w}_xs : {tp}")
        return self._narrow(w, shape)

    # ---- op spellings ----

    def _op(self, op: str, value: str, source: str, target: str, attrs: str = "") -> str:
        out = self._fresh(op[:4])
        self._emit(f"{out} = stablehlo.{op} {value}{attrs} : ({source}) -> {target}")
        return out

    def _reshape(self, value: str, shape: list[int], element: str, source: list[int]) -> str:
        if shape == source:
            return value
        return self._op("reshape", value, self._t(source, element), self._t(shape, element))

    def _swap(self, value: str, shape: list[int]) -> str:
        """(B, a, b, 2) -> (B, b, a, 2)."""
        swapped = [shape[0], shape[2], shape[1], shape[3]]
        return self._op("transpose", value, self._t(shape), self._t(swapped), ", dims = [0, 2, 1, 3]")

    def _slice(self, value: str, shape: list[int], start: list[int], limit: list[int],
               element: str | None = None) -> str:
        out = self._fresh("slice")
        result = [hi - lo for lo, hi in zip(start, limit)]
        ones = ", ".join("1" for _ in shape)
        self._emit(f'{out} = "stablehlo.slice"({value}) {{start_indices = array<i64: '
                   f'{", ".join(map(str, start))}>, limit_indices = array<i64: '
                   f'{", ".join(map(str, limit))}>, strides = array<i64: {ones}>}} : '
                   f"({self._t(shape, element)}) -> {self._t(result, element)}")
        return out

    def _concat(self, values: list[str], shape: list[int], dim: int) -> str:
        """Concatenate equal parts along ``dim``."""
        out = self._fresh("cat")
        sizes = [shape[dim] // len(values)] * len(values)
        types = ", ".join(self._t(shape[:dim] + [n] + shape[dim + 1:]) for n in sizes)
        self._emit(f"{out} = stablehlo.concatenate {', '.join(values)}, dim = {dim} : "
                   f"({types}) -> {self._t(shape)}")
        return out
