"""Radix butterfly stages of fft_fast on planes with the batch minor.

Why: the dense-matrix levels cost ~5x an FFT's flops and a transpose each.
Here the data is (digits..., 2, B): re/im planes, the B transforms minor.
A stage of radix r views it as (P, r, R, 2, B) (P: the radices done, R:
the rest) and is ONE `linalg.generic` over (P, R, B), all parallel: the r
complex inputs x[p, n, q, :, b] read through constant-index maps, an r-point
codelet (fft_codelet) in the arithmetic's type, output k times the twiddle
W_(rR)^(k q) (a (r, R) table), written to y[p, k, q, :, b] through 2r
rank-reduced slices of one destination (decimation in frequency, the
output digit in the input digit's place). The output index is k = k1 +
r1*k2 + ...: the last stage writes its slices with the digits reversed
(its P loops split into theirs, the output map permuting them), so the
planes leave as (N, 2, B) in order and one 2-D transpose (2N, B) -> (B, 2N)
is all that is left; the first reads (2N, B) (the 2-D transpose in) through
row-strided slices.
"""

from __future__ import annotations

import math

from xlac.passes.lower.fft_codelet import RADER_FROM, Codelet, twiddle_table
from xlac.passes.lower.fft_plane_ways import PlaneWays
from xlac.passes.lower.fft_stage_lines import stage_lines

#: Largest radix of a stage's codelet.
MAX_STAGE_RADIX = 16
#: Largest prime radix of a stage: 19 (~2(r-1)^2 real products) made rfft of
#: 1140 points 2.2x faster for 0.5 s more compile; 29-37 are Rader codelets
#: (fft_codelet.RADER_FROM; ifft2 296x444 2.4x faster, compile 0.9-1.4 ->
#: 5.9-9.9 s at load 5-6: hence RADER_POINTS).
MAX_STAGE_PRIME = 37
#: A stage's cost beyond its codelet (one pass over the data), in flops a point.
STAGE_COST = 12


def _codelet_flops(r: int) -> float:
    body = Codelet(twiddle_table)
    body.dft([(f"%r{n}", f"%i{n}") for n in range(r)], -1)
    return sum(" arith.constant " not in line for line in body.lines) / r


#: Fewest points (transforms times length) for the Rader radices (primes
#: above RADER_FROM): each such stage's codelet costs seconds to compile
#: (2.5-5 s at 37, docs/PERFORMANCE.md), which 296 x 444 repays in ~2,000
#: calls (1.8 ms a call saved); smaller transforms keep the matmul levels.
RADER_POINTS = 1 << 16

_PLANS: dict[tuple[int, int], tuple[float, tuple[int, ...]] | None] = {}


def stage_plan(size: int, points: int | None = None) -> list[int] | None:
    """The radices (<= MAX_STAGE_RADIX) of the fewest, cheapest stages, or None;
    primes above RADER_FROM only for ``points`` >= RADER_POINTS (or None)."""
    top = MAX_STAGE_PRIME if points is None or points >= RADER_POINTS else RADER_FROM
    best = _cheapest_stages(size, top)
    return None if best is None else list(best[1])


def _cheapest_stages(size: int, top: int = MAX_STAGE_PRIME):
    if (size, top) in _PLANS:
        return _PLANS[size, top]
    best = None
    if size == 1:
        best = (0.0, ())
    for r in range(min(top, size), 1, -1):
        if size % r or (r > MAX_STAGE_RADIX and not _is_prime(r)):
            continue
        rest = _cheapest_stages(size // r, top)
        if rest is None:
            continue
        cost = _codelet_flops(r) + STAGE_COST + (6 if size > r else 0) + rest[0]
        if best is None or cost < best[0]:
            best = (cost, (r,) + rest[1])
    _PLANS[size, top] = best
    return best


class PlanarStages(PlaneWays):
    """The butterfly path of FastStage (mixed into it)."""

    def planar(self, x: str, batch: int, size: int, sign: int, plan: list[int],
               after=None, reals: bool = False) -> str:
        """(B, N, 2) pairs -> their N-point DFTs, (B, N, 2): one 2-D transpose
        to planes (2N, B), a generic per stage (the last reversing the digits),
        one 2-D transpose back (both in register blocks where B and 2N are
        whole blocks: B is padded with zero transforms to make it so; where
        they are not, unpadded: the way out transposes the whole blocks and
        the rest apart, _planes_out). ``after(planes, B)`` -> (planes', n',
        rows): a pass on the (2N, B) planes before the way out, to (2 rows, B)
        planes of n' <= rows points (B, n', 2) then (RFFT 228 x 1140's split on
        pairs after _gathered's way out was a scalar loop, 0.84 -> 0.57 ms at
        the host, 0.96 -> 0.62 at x86-64-v3). Unpadded planes of f64 took the
        2-D ways first (_gathered's digit-reversing 5-D transpose out moved
        16-byte pairs, twice the 2-D one's time: 180 x 720 c128 0.64 -> 0.53 ms,
        100 x 540 0.18 -> 0.15; host, minima), then f32 (21 x 7000 c64: the 6-D
        transpose out, scalar loops, 206 us -> 94 in two pieces).
        With ``reals``, ``x`` is (B, N) real: the planes are its transpose and
        zero rows (no pairs before them)."""
        scale, self.scale = self.scale, 1.0         # taken once (chirp-z runs several)
        wide = self.blocked_planes(batch, size)
        narrow_from = None
        if wide is None:        # the 2-D ways, unpadded (above)
            wide, narrow_from = batch, gathered_narrow_from(plan)
        cols = size if reals else 2 * size
        rows = x if reals else self._reshape(x, [batch, cols], self.real, [batch, size, 2])
        planes = self._padded_planes(rows, batch, wide, cols)
        return self.stages_out(planes, batch, wide, size, sign, plan, scale, after, reals,
                               narrow_from)[0]

    def kernels_for(self, plan: list[int]):
        """``declare`` for stage_lines: FFT micro-kernels for every stage of a plan
        with a Rader prime (micro-kernels on), else None (generics)."""
        return self.declare if any(r > RADER_FROM for r in plan) else None

    def blocked_planes(self, batch: int, size: int) -> int | None:
        """The transforms planar runs in register-blocked transposes (B padded),
        or None where it gathers (B or 2N no whole blocks)."""
        wide = padded_batch(batch, size) if self.real == "f32" and self.pads else batch
        side = 16 if self.real == "f32" else 8
        return None if wide == batch and (batch % side or (2 * size) % side) else wide

    def _zero_pad(self, value: str, shape: list[int], dim: int, wide: int) -> str:
        """``value`` with zero transforms added along ``dim`` up to ``wide``."""
        out, target = self._fresh("pad"), list(shape)
        target[dim] = wide
        zeros = ", ".join("0" for _ in shape)
        high = ", ".join(str(wide - shape[d] if d == dim else 0) for d in range(len(shape)))
        self._emit(f"{out}_z = stablehlo.constant dense<0.0> : {self._t([])}",
                   f"{out} = stablehlo.pad {value}, {out}_z, low = [{zeros}], high = [{high}], "
                   f"interior = [{zeros}] : ({self._t(shape)}, {self._t([])}) -> "
                   f"{self._t(target)}")
        return out

    def _gathered(self, x: str | None, batch: int, size: int, sign: int, plan: list[int],
                  scale: float, planes: str | None = None, reals: bool = False) -> str:
        """IRFFT's planes where the transposes gather anyway (B or 2N no whole
        blocks; planar's way there before its 2-D ways with the whole blocks
        apart): (N, 2, B), the stages, one digit-reversing transpose out.
        The reversal in the last stage and the strided first reads did not
        pay here (228 x 1140 rfft at x86-64-v3 1.14 -> 1.80 ms, twice). As on
        the blocked planes' RFFT, the last stage computes in the stored type
        (f32: twice the lanes; 21 x 7000 c64's radix-7 stage 129 -> 89 us):
        all but the first in f32 gave 21 x 7000 (four stages) XLA's maximum
        error, 1.74e-7 of the largest output (the last alone: 1.15e-7), and
        4 x 1024 (three) 8.7e-8 rms against a bound of 8e-8."""
        if planes is None:      # else given: (N, 2, B) (fft_real's merge), (N, B) reals
            planes = self._op("transpose", x, self._t([batch, size, 2]), self._t([size, 2, batch]),
                              ", dims = [1, 2, 0]")
        done, shape = 1, [size, 2, batch]
        narrow_from = max(1, len(plan) - 1)
        for i, r in enumerate(plan):
            rest = size // (done * r)
            view = [done, r, rest, 2, batch]
            if not (reals and done == 1):
                planes = self._reshape(planes, view, self.real, shape)
            out = self._fresh("bfly")
            self._emit(*stage_lines(planes, out, (done, r, rest, batch), sign, self._twiddles,
                                    self.real, self.compute if i < narrow_from else self.real,
                                    scale=scale if done == 1 else 1.0,
                                    reals=reals and done == 1, declare=self.kernels_for(plan)))
            planes, shape, done = out, view, done * r
        digits = list(plan) + [2, batch]
        planes = self._reshape(planes, digits, self.real, shape)
        count = len(plan)
        perm = [count + 1] + list(range(count - 1, -1, -1)) + [count]
        out = self._op("transpose", planes, self._t(digits),
                       self._t([digits[d] for d in perm]), f", dims = {perm}")
        return self._reshape(out, [batch, size, 2], self.real, [digits[d] for d in perm])

    def stages_out(self, planes: str, batch: int, wide: int, size: int, sign: int,
                   plan: list[int], scale: float, after=None, reals: bool = False,
                   narrow_from: int | None = None) -> tuple[str, int]:
        """_planes from its (2N, wide) planes ((N, wide) reals): the stages and
        the way out. ``narrow_from``: the first stage in the stored type (by
        default the last where ``after`` follows, else the second)."""
        if narrow_from is None:
            narrow_from = max(1, len(plan) - 1) if after is not None else 1
        planes = self.on_planes(planes, wide, size, sign, plan, scale, narrow_from, reals)
        n_out = n_rows = size
        if after is not None:       # n_out transforms' points of n_rows (whole blocks)
            planes, n_out, n_rows = after(planes, wide)
        out = self._planes_out(planes, [2 * n_rows, wide], batch, 2 * n_out)
        return self._reshape(out, [batch, n_out, 2], self.real, [batch, 2 * n_out]), n_out

    def on_planes(self, planes: str, batch: int, size: int, sign: int, plan: list[int],
                  scale: float, narrow_from: int = 1, reals: bool = False) -> str:
        """(2N, B) planes -> their transforms, (2N, B) in order: a generic per
        stage, the last reversing the digits. Stages from ``narrow_from`` on
        compute in the stored type (f32: twice the lanes an instruction of
        f64's, no widening; the first stays in ``compute``): the error stays
        below XLA's where narrowing every stage reached it (docs/PERFORMANCE.md).
        RFFT narrows only its last stage (its split follows). ``reals``: ``planes``
        is (N, B), real parts only (zero imaginary parts)."""
        done, shape = 1, [2 * size, batch]
        for i, r in enumerate(plan):
            rest = size // (done * r)
            last = i == len(plan) - 1 and i >= 1
            view = plan[:i] + [r, 2, batch] if last else [done, r, rest, 2, batch]
            if i:
                planes = self._reshape(planes, view, self.real, shape)
            out = self._fresh("bfly")
            self._emit(*stage_lines(planes, out, (done, r, rest, batch), sign, self._twiddles,
                                    self.real, self.real if i >= narrow_from else self.compute,
                                    plan[:i] if last else None, i == 0,
                                    scale if i == 0 else 1.0, reals and i == 0, self.kernels_for(plan)))
            planes, shape, done = out, view, done * r
            if last:
                shape = plan[::-1] + [2, batch]
        return self._reshape(planes, [2 * size, batch], self.real, shape)

    def leading_axis(self, value: str, shape: list[int], size: int, sign: int,
                     plan: list[int]) -> str:
        """A complex transform along the leading axis (every dim before it 1):
        its (N, B) real and imaginary parts are the planes already, (N, 2, B),
        so no transposes, in or out, nor the axis's own (axis 0 of 256 x 1024
        c64 had four: the axis moved last and back, the planes' ways)."""
        batch = math.prod(shape) // size
        flat = self._reshape(value, [size, batch], self.complex, shape)
        parts = []
        for part in ("real", "imag"):
            p = self._op(part, flat, self._t([size, batch], self.complex), self._t([size, batch]))
            parts.append(self._reshape(p, [size, 1, batch], self.real, [size, batch]))
        planes = self._concat(parts, [size, 2, batch], 1)
        wide = batch + 16 if batch % POW2_PLANES == 0 else batch
        if wide != batch:
            planes = self._zero_pad(planes, [size, 2, batch], 2, wide)
        planes = self._reshape(planes, [2 * size, wide], self.real, [size, 2, wide])
        scale, self.scale = self.scale, 1.0
        planes = self._reshape(self.on_planes(planes, wide, size, sign, plan, scale),
                               [size, 2, wide], self.real, [2 * size, wide])
        halves = [self._reshape(self._slice(planes, [size, 2, wide], [0, c, 0],
                                            [size, c + 1, batch]), [size, batch], self.real,
                                [size, 1, batch]) for c in (0, 1)]
        out = self._fresh("cplx")
        self._emit(f"{out} = stablehlo.complex {halves[0]}, {halves[1]} : "
                   f"{self._t([size, batch], self.complex)}")
        return self._reshape(out, shape, self.complex, [size, batch])


#: Planes of a multiple of this many transforms get one more block: their
#: rows lie a power of two apart, and a stage's 2r slices (rows R*2B*4 bytes
#: apart) fell in the same L1 sets (128 x 1024 points 1.18 -> 0.58 ms, 1024 x
#: 128 0.85 -> 0.39; 256 x 720 and 180 x 720 (192) no better: docs/PERFORMANCE.md).
POW2_PLANES = 128


#: Most padding of the transforms, as (padded, of) parts: 21 x 7000 padded
#: to 32 transforms ran 1.03 -> 1.53 ms (minima, load 12).
MAX_PAD = (1, 8)


def padded_batch(batch: int, size: int, side: int = 16) -> int:
    """The transforms a planar FFT of f32 planes runs: ``batch`` rounded up
    to whole register blocks of the transposes (16 x 16) where the 2N rows
    are whole blocks too (else they gather anyway), plus a block where that
    is a multiple of POW2_PLANES; unpadded where that would add more than
    MAX_PAD (the transposes then gather). Not for f64 planes (180 x 720
    c128: 0.93 ms padded, 0.77 not at x86-64-v3, a tie at the host) nor an
    axis moved last by a transpose (fft2 416 x 312: 1.23 / 1.03 at
    x86-64-v3, 1.10 / 0.98 host; the pad keeps the two transposes apart)."""
    if (2 * size) % side:
        return batch
    wide = -(-batch // side) * side
    wide = wide + side if wide % POW2_PLANES == 0 else wide
    return wide if wide * MAX_PAD[1] <= batch * sum(MAX_PAD) else batch


def gathered_narrow_from(plan: list[int]) -> int:
    """The first stage computed in the stored type where the planes'
    transposes gather (B no whole blocks): the last, or the last two of
    four or more. 21 x 7000 c64 (10*10*7*10): its third stage 130 -> 88 us
    in f32, the error of the largest output 1.25-1.34e-7 on normal data,
    XLA's 1.53-1.76e-7; the last two of three (228 x 1140 RFFT, 21 x 700
    FFT) passed XLA's maximum on some inputs, as every stage but the first
    of four did (1.74e-7)."""
    return max(1, len(plan) - (2 if len(plan) >= 4 else 1))


def _is_prime(r: int) -> bool:
    return r > 1 and all(r % d for d in range(2, int(r ** 0.5) + 1))
