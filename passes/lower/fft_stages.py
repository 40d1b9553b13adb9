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
from collections.abc import Callable

import numpy as np

from xlac.dtypes import tensor_type
from xlac.passes.lower.fft_codelet import RADER_FROM, Codelet, twiddle_table


def stage_lines(x: str, out: str, dims: tuple[int, int, int, int], sign: int,
                twiddles: Callable[[int, int], tuple[np.ndarray, np.ndarray]],
                real: str, compute: str, done: list[int] | None = None,
                first: bool = False, scale: float = 1.0) -> list[str]:
    """One radix-r stage: ``x`` (P, r, R, 2, B) of ``real`` -> ``out``, the same shape.
    With ``done`` (the last stage, R = 1: P's radices r1..r_(m-1)), ``x`` is
    (r1, .., r_(m-1), r, 2, B) and ``out`` (r, r_(m-1), .., r1, 2, B): the
    digits reversed by the writes' maps, the B planes still minor. With
    ``first`` (P = 1), ``x`` is (2N, B), read through row-strided slices.
    ``scale`` multiplies every output (IFFT's 1/N: in the twiddle tables,
    a product where there is none), rounded once with the rest."""
    p, r, rest, b = dims
    shape = [p, r, rest, 2, b]
    full = tensor_type(shape, real)
    lane = tensor_type([p, rest, b], real)
    if done is not None:
        return _reversing_lines(x, out, done, r, b, sign, twiddles, real, compute, scale)
    lines: list[str] = []
    twiddled = rest > 1
    if twiddled:
        cos, sin = twiddles(r * rest, sign)
        m = np.outer(np.arange(r), np.arange(rest)) % (r * rest)
        dtype = "<f8" if compute == "f64" else "<f4"
        for k in range(1, r):
            for c, table in enumerate((cos, sin)):
                data = np.ascontiguousarray(table[m[k]] * scale).astype(dtype).tobytes().hex().upper()
                lines.append(f'{out}_w{k}_{c} = arith.constant dense<"0x{data}"> : '
                             f"{tensor_type([rest], compute)}")
    lines.append(f"{out}_e = bufferization.alloc_tensor() : {full}")
    outs, ins = [], []
    flat = tensor_type([2 * r * rest, b], real)
    for k in range(r):
        for c in range(2):
            lines.append(f"{out}_o{k}_{c} = tensor.extract_slice {out}_e[0, {k}, 0, {c}, 0] "
                         f"[{p}, 1, {rest}, 1, {b}] [1, 1, 1, 1, 1] : {full} to {lane}")
            outs.append(f"{out}_o{k}_{c}")
            if first:       # x is (2N, B): rows 2(R k + q) + c
                lines.append(f"{out}_x{k}_{c} = tensor.extract_slice {x}[{2 * rest * k + c}, 0] "
                             f"[{rest}, {b}] [2, 1] : {flat} to {tensor_type([rest, b], real)}")
            else:
                lines.append(f"{out}_x{k}_{c} = tensor.extract_slice {x}[0, {k}, 0, {c}, 0] "
                             f"[{p}, 1, {rest}, 1, {b}] [1, 1, 1, 1, 1] : {full} to {lane}")
            ins.append(f"{out}_x{k}_{c}")
    maps = [("affine_map<(p, q, b) -> (q, b)>" if first else
             "affine_map<(p, q, b) -> (p, q, b)>")] * (2 * r)
    types = [tensor_type([rest, b], real) if first else lane] * (2 * r)
    if twiddled:
        ins += [f"{out}_w{k}_{c}" for k in range(1, r) for c in range(2)]
        maps += ["affine_map<(p, q, b) -> (q)>"] * (2 * (r - 1))
        types += [tensor_type([rest], compute)] * (2 * (r - 1))
    maps += ["affine_map<(p, q, b) -> (p, q, b)>"] * (2 * r)
    lines += _generic(out, r, twiddled, twiddles, sign, real, compute, ins, outs, maps, types,
                      lane, 3, scale)
    return lines + _inserts(out, r, lambda k, c: f"[0, {k}, 0, {c}, 0] [{p}, 1, {rest}, 1, {b}] "
                            "[1, 1, 1, 1, 1]", f"{lane} into {full}")


def _inserts(out: str, r: int, box, types: str) -> list[str]:
    """The generic's 2r results into ``out``'s slices ``box(k, c)``."""
    lines, dest = [], f"{out}_e"
    for i in range(2 * r):
        k, c = divmod(i, 2)
        nxt = f"{out}_i{i}" if i < 2 * r - 1 else out
        lines.append(f"{nxt} = tensor.insert_slice {out}_g#{i} into {dest}{box(k, c)} : {types}")
        dest = nxt
    return lines


def _reversing_lines(x: str, out: str, done: list[int], r: int, b: int, sign: int,
                     twiddles, real: str, compute: str, scale: float) -> list[str]:
    """The last stage (no twiddles) writing its outputs digit-reversed (stage_lines)."""
    rank = len(done) + 1
    source = tensor_type(done + [r, 2, b], real)
    full = tensor_type([r] + done[::-1] + [2, b], real)
    lane_in = tensor_type(done + [b], real)
    lane_out = tensor_type(done[::-1] + [b], real)
    lines = [f"{out}_e = bufferization.alloc_tensor() : {full}"]
    zeros, ones = ", ".join(["0"] * len(done)), ", ".join(["1"] * len(done))
    sizes = ", ".join(map(str, done))
    rsizes = ", ".join(map(str, done[::-1]))
    ins, outs = [], []
    for k in range(r):
        for c in range(2):
            lines.append(f"{out}_x{k}_{c} = tensor.extract_slice {x}[{zeros}, {k}, {c}, 0] "
                         f"[{sizes}, 1, 1, {b}] [{ones}, 1, 1, 1] : {source} to {lane_in}")
            lines.append(f"{out}_o{k}_{c} = tensor.extract_slice {out}_e[{k}, {zeros}, {c}, 0] "
                         f"[1, {rsizes}, 1, {b}] [1, {ones}, 1, 1] : {full} to {lane_out}")
            ins.append(f"{out}_x{k}_{c}")
            outs.append(f"{out}_o{k}_{c}")
    loops = ", ".join(f"d{i}" for i in range(rank))
    back = ", ".join([f"d{i}" for i in range(rank - 2, -1, -1)] + [f"d{rank - 1}"])
    maps = [f"affine_map<({loops}) -> ({loops})>"] * (2 * r)
    maps += [f"affine_map<({loops}) -> ({back})>"] * (2 * r)
    lines += _generic(out, r, False, twiddles, sign, real, compute, ins, outs, maps,
                      [lane_in] * (2 * r), lane_out, rank, scale)
    return lines + _inserts(out, r, lambda k, c: f"[{k}, {zeros}, {c}, 0] [1, {rsizes}, 1, {b}] "
                            f"[1, {ones}, 1, 1]", f"{lane_out} into {full}")


def _generic(out: str, r: int, twiddled: bool, twiddles, sign: int, real: str, compute: str,
             ins: list[str], outs: list[str], maps: list[str], types: list[str], lane: str,
             rank: int, scale: float = 1.0) -> list[str]:
    """The stage's multi-result generic: r inputs, the codelet, the twiddles, r outputs."""
    lines = []
    args = [f"%a{i}: {real}" for i in range(2 * r)]
    args += [f"%w{i}: {compute}" for i in range(2 * (r - 1) if twiddled else 0)]
    args += [f"%o{i}: {real}" for i in range(2 * r)]
    body = Codelet(twiddles, compute, "%v")
    xs = []
    for n in range(r):
        pair = []
        for c in range(2):
            if compute != real:
                body.lines.append(f"%x{n}_{c} = arith.extf %a{2 * n + c} : {real} to {compute}")
                pair.append(f"%x{n}_{c}")
            else:
                pair.append(f"%a{2 * n + c}")
        xs.append(tuple(pair))
    ys = body.dft(xs, sign)
    if twiddled:        # the tables carry the scale
        ys = [ys[0]] + [_times(body, ys[k], f"%w{2 * k - 2}", f"%w{2 * k - 1}") for k in range(1, r)]
    if scale != 1.0:
        ys = [body.scale(y, scale) if k == 0 or not twiddled else y for k, y in enumerate(ys)]
    results = []
    for k in range(r):
        for c in range(2):
            v = ys[k][c]
            if compute != real:
                body.lines.append(f"%y{k}_{c} = arith.truncf {v} : {compute} to {real}")
                v = f"%y{k}_{c}"
            results.append(v)
    iterators = ", ".join(['"parallel"'] * rank)
    lines.append(
        f"{out}_g:{2 * r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
        f"iterator_types = [{iterators}]}} ins({', '.join(ins)} : {', '.join(types)}) "
        f"outs({', '.join(outs)} : {', '.join([lane] * (2 * r))}) {{")
    lines.append(f"^bb0({', '.join(args)}):")
    lines.extend("  " + line for line in body.lines)
    lines.append(f"  linalg.yield {', '.join(results)} : {', '.join([real] * (2 * r))}")
    lines.append(f"}} -> ({', '.join([lane] * (2 * r))})")
    return lines


def _times(body: Codelet, a, wr: str, wi: str):
    re = body.op("subf", body.op("mulf", a[0], wr), body.op("mulf", a[1], wi))
    im = body.op("addf", body.op("mulf", a[0], wi), body.op("mulf", a[1], wr))
    return re, im


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


class PlanarStages:
    """The butterfly path of FastStage (mixed into it)."""

    def planar(self, x: str, batch: int, size: int, sign: int, plan: list[int],
               after=None) -> str:
        """(B, N, 2) pairs -> their N-point DFTs, (B, N, 2): one 2-D transpose
        to planes (2N, B), a generic per stage (the last reversing the digits),
        one 2-D transpose back (both in register blocks where B and 2N are
        whole blocks: B is padded with zero transforms to make it so; where
        they are not, _gathered's way). ``after(planes, B)`` -> (planes', n',
        rows): a pass on the (2N, B) planes before the way out, to (2 rows, B)
        planes of n' <= rows points (B, n', 2) then (only where ``blocked_planes``)."""
        scale, self.scale = self.scale, 1.0         # taken once (chirp-z runs several)
        rows = self._reshape(x, [batch, 2 * size], self.real, [batch, size, 2])
        wide = self.blocked_planes(batch, size)
        if wide is None:
            return self._gathered(x, batch, size, sign, plan, scale)
        if wide != batch:
            rows = self._zero_pad(rows, [batch, 2 * size], 0, wide)
        out, n_out = self._planes(rows, wide, size, sign, plan, scale, after)
        return out if wide == batch else \
            self._slice(out, [wide, n_out, 2], [0, 0, 0], [batch, n_out, 2])

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
                  scale: float, planes: str | None = None) -> str:
        """planar where the transposes gather anyway (B or 2N no whole blocks):
        (B, N, 2) -> (N, 2, B), the stages, one digit-reversing transpose out.
        The reversal in the last stage and the strided first reads did not
        pay here (228 x 1140 rfft at x86-64-v3 1.14 -> 1.80 ms, twice)."""
        if planes is None:      # else given: (N, 2, B) (fft_real's merge)
            planes = self._op("transpose", x, self._t([batch, size, 2]), self._t([size, 2, batch]),
                              ", dims = [1, 2, 0]")
        done, shape = 1, [size, 2, batch]
        for r in plan:
            rest = size // (done * r)
            view = [done, r, rest, 2, batch]
            planes = self._reshape(planes, view, self.real, shape)
            out = self._fresh("bfly")
            self._emit(*stage_lines(planes, out, (done, r, rest, batch), sign, self._twiddles,
                                    self.real, self.compute, scale=scale if done == 1 else 1.0))
            planes, shape, done = out, view, done * r
        digits = list(plan) + [2, batch]
        planes = self._reshape(planes, digits, self.real, shape)
        count = len(plan)
        perm = [count + 1] + list(range(count - 1, -1, -1)) + [count]
        out = self._op("transpose", planes, self._t(digits),
                       self._t([digits[d] for d in perm]), f", dims = {perm}")
        return self._reshape(out, [batch, size, 2], self.real, [digits[d] for d in perm])

    def _planes(self, rows: str, batch: int, size: int, sign: int, plan: list[int],
                scale: float, after=None) -> tuple[str, int]:
        """planar's transforms of (B, 2N) rows, B a whole number of blocks."""
        planes = self._op("transpose", rows, self._t([batch, 2 * size]),
                          self._t([2 * size, batch]), ", dims = [1, 0]")
        planes = self.on_planes(planes, batch, size, sign, plan, scale,
                                max(1, len(plan) - 1) if after is not None else 1)
        n_out = n_rows = size
        if after is not None:       # n_out transforms' points of n_rows (whole blocks)
            planes, n_out, n_rows = after(planes, batch)
        out = self._op("transpose", planes, self._t([2 * n_rows, batch]),
                       self._t([batch, 2 * n_rows]), ", dims = [1, 0]")
        out = self._reshape(out, [batch, n_rows, 2], self.real, [batch, 2 * n_rows])
        if n_rows != n_out:
            out = self._slice(out, [batch, n_rows, 2], [0, 0, 0], [batch, n_out, 2])
        return out, n_out

    def on_planes(self, planes: str, batch: int, size: int, sign: int, plan: list[int],
                  scale: float, narrow_from: int = 1) -> str:
        """(2N, B) planes -> their transforms, (2N, B) in order: a generic per
        stage, the last reversing the digits. Stages from ``narrow_from`` on
        compute in the stored type (f32: twice the lanes an instruction of
        f64's, no widening; the first stays in ``compute``): the error stays
        below XLA's where narrowing every stage reached it (docs/PERFORMANCE.md).
        RFFT narrows only its last stage (its split follows)."""
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
                                    scale if i == 0 else 1.0))
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


def _is_prime(r: int) -> bool:
    return r > 1 and all(r % d for d in range(2, int(r ** 0.5) + 1))
