"""Radix butterfly stages of fft_fast on planes with the batch minor.

Why: the dense-matrix levels cost ~5x an FFT's flops and a transpose each.
Here the data is (digits..., 2, B): re/im planes, the B transforms minor.
A stage of radix r views it as (P, r, R, 2, B) (P: the radices done, R:
the rest) and is ONE `linalg.generic` over (P, R, B), all parallel: the r
complex inputs x[p, n, q, :, b] read through constant-index maps, an r-point
codelet (fft_codelet) in the arithmetic's type, output k times the twiddle
W_(rR)^(k q) (a (r, R) table), written to y[p, k, q, :, b] through 2r
rank-reduced slices of one destination (decimation in frequency, the
output digit in the input digit's place). After the last stage the digits
are reversed: k = k1 + r1*k2 + ..., undone by the final transpose.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xlac.dtypes import tensor_type
from xlac.passes.lower.fft_codelet import Codelet, twiddle_table


def stage_lines(x: str, out: str, dims: tuple[int, int, int, int], sign: int,
                twiddles: Callable[[int, int], tuple[np.ndarray, np.ndarray]],
                real: str, compute: str) -> list[str]:
    """One radix-r stage: ``x`` (P, r, R, 2, B) of ``real`` -> ``out``, the same shape."""
    p, r, rest, b = dims
    shape = [p, r, rest, 2, b]
    full = tensor_type(shape, real)
    lane = tensor_type([p, rest, b], real)
    lines: list[str] = []
    twiddled = rest > 1
    if twiddled:
        cos, sin = twiddles(r * rest, sign)
        m = np.outer(np.arange(r), np.arange(rest)) % (r * rest)
        dtype = "<f8" if compute == "f64" else "<f4"
        for k in range(1, r):
            for c, table in enumerate((cos, sin)):
                data = np.ascontiguousarray(table[m[k]]).astype(dtype).tobytes().hex().upper()
                lines.append(f'{out}_w{k}_{c} = arith.constant dense<"0x{data}"> : '
                             f"{tensor_type([rest], compute)}")
    lines.append(f"{out}_e = bufferization.alloc_tensor() : {full}")
    outs, ins = [], []
    for k in range(r):
        for c in range(2):
            for name, source, into in ((f"{out}_o{k}_{c}", f"{out}_e", outs),
                                       (f"{out}_x{k}_{c}", x, ins)):
                lines.append(f"{name} = tensor.extract_slice {source}[0, {k}, 0, {c}, 0] "
                             f"[{p}, 1, {rest}, 1, {b}] [1, 1, 1, 1, 1] : {full} to {lane}")
                into.append(name)
    maps = ["affine_map<(p, q, b) -> (p, q, b)>"] * (2 * r)
    types = [lane] * (2 * r)
    if twiddled:
        ins += [f"{out}_w{k}_{c}" for k in range(1, r) for c in range(2)]
        maps += ["affine_map<(p, q, b) -> (q)>"] * (2 * (r - 1))
        types += [tensor_type([rest], compute)] * (2 * (r - 1))
    maps += ["affine_map<(p, q, b) -> (p, q, b)>"] * (2 * r)
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
    if twiddled:
        ys = [ys[0]] + [_times(body, ys[k], f"%w{2 * k - 2}", f"%w{2 * k - 1}") for k in range(1, r)]
    results = []
    for k in range(r):
        for c in range(2):
            v = ys[k][c]
            if compute != real:
                body.lines.append(f"%y{k}_{c} = arith.truncf {v} : {compute} to {real}")
                v = f"%y{k}_{c}"
            results.append(v)
    iterators = ", ".join(['"parallel"'] * 3)
    lines.append(
        f"{out}_g:{2 * r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
        f"iterator_types = [{iterators}]}} ins({', '.join(ins)} : {', '.join(types)}) "
        f"outs({', '.join(outs)} : {', '.join([lane] * (2 * r))}) {{")
    lines.append(f"^bb0({', '.join(args)}):")
    lines.extend("  " + line for line in body.lines)
    lines.append(f"  linalg.yield {', '.join(results)} : {', '.join([real] * (2 * r))}")
    lines.append(f"}} -> ({', '.join([lane] * (2 * r))})")
    dest = f"{out}_e"
    for i in range(2 * r):
        k, c = divmod(i, 2)
        nxt = f"{out}_i{i}" if i < 2 * r - 1 else out
        lines.append(f"{nxt} = tensor.insert_slice {out}_g#{i} into {dest}[0, {k}, 0, {c}, 0] "
                     f"[{p}, 1, {rest}, 1, {b}] [1, 1, 1, 1, 1] : {lane} into {full}")
        dest = nxt
    return lines


def _times(body: Codelet, a, wr: str, wi: str):
    re = body.op("subf", body.op("mulf", a[0], wr), body.op("mulf", a[1], wi))
    im = body.op("addf", body.op("mulf", a[0], wi), body.op("mulf", a[1], wr))
    return re, im


#: Largest radix of a stage's codelet.
MAX_STAGE_RADIX = 16
#: Largest prime radix of a stage (a codelet of ~2(r-1)^2 real products): 19
#: made rfft of 1140 points 2.2x faster for 0.5 s more compile time; 37 made
#: fft2 296x444 2x faster but took 10.6 s instead of 1.5 to compile.
MAX_STAGE_PRIME = 23
#: A stage's cost beyond its codelet (one pass over the data), in flops a point.
STAGE_COST = 12


def _codelet_flops(r: int) -> float:
    body = Codelet(twiddle_table)
    body.dft([(f"%r{n}", f"%i{n}") for n in range(r)], -1)
    return sum(" arith.constant " not in line for line in body.lines) / r


_PLANS: dict[int, tuple[float, tuple[int, ...]] | None] = {}


def stage_plan(size: int) -> list[int] | None:
    """The radices (<= MAX_STAGE_RADIX) of the fewest, cheapest stages, or None."""
    best = _cheapest_stages(size)
    return None if best is None else list(best[1])


def _cheapest_stages(size: int):
    if size in _PLANS:
        return _PLANS[size]
    best = None
    if size == 1:
        best = (0.0, ())
    for r in range(min(MAX_STAGE_PRIME, size), 1, -1):
        if size % r or (r > MAX_STAGE_RADIX and not _is_prime(r)):
            continue
        rest = _cheapest_stages(size // r)
        if rest is None:
            continue
        cost = _codelet_flops(r) + STAGE_COST + (6 if size > r else 0) + rest[0]
        if best is None or cost < best[0]:
            best = (cost, (r,) + rest[1])
    _PLANS[size] = best
    return best


class PlanarStages:
    """The butterfly path of FastStage (mixed into it)."""

    def planar(self, x: str, batch: int, size: int, sign: int, plan: list[int]) -> str:
        """(B, N, 2) pairs -> their N-point DFTs, (B, N, 2): one transpose to
        planes (N, 2, B), a generic per stage, one digit-reversing transpose."""
        planes = self._op("transpose", x, self._t([batch, size, 2]), self._t([size, 2, batch]),
                          ", dims = [1, 2, 0]")
        done, shape = 1, [size, 2, batch]
        for r in plan:
            rest = size // (done * r)
            view = [done, r, rest, 2, batch]
            planes = self._reshape(planes, view, self.real, shape)
            out = self._fresh("bfly")
            self._emit(*stage_lines(planes, out, (done, r, rest, batch), sign, self._twiddles,
                                    self.real, self.compute))
            planes, shape, done = out, view, done * r
        digits = list(plan) + [2, batch]
        planes = self._reshape(planes, digits, self.real, shape)
        count = len(plan)
        perm = [count + 1] + list(range(count - 1, -1, -1)) + [count]
        out = self._op("transpose", planes, self._t(digits),
                       self._t([digits[d] for d in perm]), f", dims = {perm}")
        return self._reshape(out, [batch, size, 2], self.real, [digits[d] for d in perm])


def _is_prime(r: int) -> bool:
    return r > 1 and all(r % d for d in range(2, int(r ** 0.5) + 1))
