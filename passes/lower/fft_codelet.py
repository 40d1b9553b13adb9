"""Straight-line r-point DFT codelets as `arith` ops, for fft_stages.

Why: a dense r-point DFT is r*r complex products (64 flops a point at 16);
radix 2/3/4/5/... butterflies composed Cooley-Tukey style cost ~10. The
codelet works on scalars (re, im names) inside a `linalg.generic` body, so
vectorization runs it across the transforms (the minor axis). Constant
twiddles come from the exact quadrant-reduced f64 table; products by 1, -1,
+-i are swaps and negations, by (+-1 +- i)/sqrt(2) two products.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Complex = tuple[str, str]


class Codelet:
    """Emits `arith` lines on one float type into ``lines``."""

    def __init__(self, twiddles: Callable[[int, int], tuple[np.ndarray, np.ndarray]],
                 element: str = "f64", prefix: str = "%v"):
        self.twiddles, self.element, self.prefix = twiddles, element, prefix
        self.lines: list[str] = []
        self._constants: dict[float, str] = {}

    # ---- scalars ----

    def _new(self) -> str:
        return f"{self.prefix}{len(self.lines)}"

    def op(self, name: str, *args: str) -> str:
        out = self._new()
        self.lines.append(f"{out} = arith.{name} {', '.join(args)} : {self.element}")
        return out

    def literal(self, value: float) -> str:
        """A constant's attribute text (a splat in a vector codelet)."""
        return repr(value)

    def const(self, value: float) -> str:
        value = float(value)
        if value not in self._constants:
            out = self._new()
            self.lines.append(f"{out} = arith.constant {self.literal(value)} : {self.element}")
            self._constants[value] = out
        return self._constants[value]

    # ---- complex values as (re, im) ----

    def add(self, a: Complex, b: Complex) -> Complex:
        return self.op("addf", a[0], b[0]), self.op("addf", a[1], b[1])

    def sub(self, a: Complex, b: Complex) -> Complex:
        return self.op("subf", a[0], b[0]), self.op("subf", a[1], b[1])

    def times_i(self, a: Complex, sign: int) -> Complex:
        """a * (sign * i)."""
        if sign > 0:
            return self.op("negf", a[1]), a[0]
        return a[1], self.op("negf", a[0])

    def scale(self, a: Complex, factor: float) -> Complex:
        k = self.const(factor)
        return self.op("mulf", a[0], k), self.op("mulf", a[1], k)

    def times(self, a: Complex, c: float, s: float) -> Complex:
        """a * (c + i s) for a constant, the trivial ones without products."""
        if s == 0 and c == 1:
            return a
        if s == 0 and c == -1:
            return self.op("negf", a[0]), self.op("negf", a[1])
        if c == 0 and abs(s) == 1:
            return self.times_i(a, int(s))
        if abs(abs(c) - abs(s)) < 1e-15:        # (+-1 +- i) / sqrt(2)
            re, im = ((self.op("subf", a[0], a[1]), self.op("addf", a[0], a[1])) if c * s > 0
                      else (self.op("addf", a[0], a[1]), self.op("subf", a[1], a[0])))
            out = self.scale((re, im), abs(c))
            return out if c > 0 else (self.op("negf", out[0]), self.op("negf", out[1]))
        kc, ks = self.const(c), self.const(s)
        re = self.op("subf", self.op("mulf", a[0], kc), self.op("mulf", a[1], ks))
        im = self.op("addf", self.op("mulf", a[0], ks), self.op("mulf", a[1], kc))
        return re, im

    def twiddle(self, a: Complex, power: int, size: int, sign: int) -> Complex:
        """a * W_size^power, W = exp(sign 2 pi i / size), from the exact table."""
        cos, sin = self.twiddles(size, sign)
        return self.times(a, float(cos[power % size]), float(sin[power % size]))

    # ---- DFTs ----

    def dft(self, xs: list[Complex], sign: int) -> list[Complex]:
        """y[k] = sum_n x[n] W^(n k), W = exp(sign 2 pi i / r)."""
        r = len(xs)
        if r == 1:
            return list(xs)
        if r == 2:
            return [self.add(xs[0], xs[1]), self.sub(xs[0], xs[1])]
        if r == 4:
            t0, t1 = self.add(xs[0], xs[2]), self.sub(xs[0], xs[2])
            t2, t3 = self.add(xs[1], xs[3]), self.times_i(self.sub(xs[1], xs[3]), sign)
            return [self.add(t0, t2), self.add(t1, t3), self.sub(t0, t2), self.sub(t1, t3)]
        first = split_factor(r)
        if first == r:
            return self._rader(xs, sign) if r > RADER_FROM else self._prime(xs, sign)
        return self._composite(xs, first, sign)

    def _composite(self, xs: list[Complex], r1: int, sign: int) -> list[Complex]:
        """r = r1 * r2, n = r2*n1 + n2, k = k1 + r1*k2: r2 DFTs of r1 points,
        twiddles W_r^(n2 k1), r1 DFTs of r2 points."""
        r = len(xs)
        r2 = r // r1
        inner = [self.dft([xs[r2 * n1 + n2] for n1 in range(r1)], sign) for n2 in range(r2)]
        inner = [[self.twiddle(inner[n2][k1], n2 * k1, r, sign) for k1 in range(r1)]
                 for n2 in range(r2)]
        out: list[Complex | None] = [None] * r
        for k1 in range(r1):
            col = self.dft([inner[n2][k1] for n2 in range(r2)], sign)
            for k2 in range(r2):
                out[k1 + r1 * k2] = col[k2]
        return out

    def _prime(self, xs: list[Complex], sign: int) -> list[Complex]:
        """Odd r by the symmetric pairs x[n] +- x[r-n]: (r-1)^2 real products."""
        r = len(xs)
        cos, sin = self.twiddles(r, sign)
        half = (r - 1) // 2
        sums = [self.add(xs[n], xs[r - n]) for n in range(1, half + 1)]
        diffs = [self.sub(xs[n], xs[r - n]) for n in range(1, half + 1)]
        y0 = xs[0]
        for s in sums:
            y0 = self.add(y0, s)
        out: list[Complex | None] = [y0] + [None] * (r - 1)
        for k in range(1, half + 1):
            a, b = xs[0], None
            for n in range(1, half + 1):
                m = n * k % r
                a = self.add(a, self.scale(sums[n - 1], float(cos[m])))
                # sin carries the sign: b = sum sin * d, y = a + i b, a - i b
                term = self.scale(diffs[n - 1], float(sin[m]))
                b = term if b is None else self.add(b, term)
            ib = self.times_i(b, 1)
            out[k], out[r - k] = self.add(a, ib), self.sub(a, ib)
        return out

    def _rader(self, xs: list[Complex], sign: int) -> list[Complex]:
        """Prime r as a cyclic convolution of length r - 1 (Rader): with g a
        generator mod r, a[q] = x[g^q], y[g^-m] = x[0] + sum_q a[q] W^(g^(m-q)),
        the convolution by two (r-1)-point codelets and r-1 constant products
        (the kernel's spectrum, exact in numpy's f64, over r-1); y[0] = x[0] +
        the first's zeroth output."""
        r = len(xs)
        powers = [pow(generator(r), q, r) for q in range(r - 1)]
        cos, sin = self.twiddles(r, sign)
        back = [powers[-q % (r - 1)] for q in range(r - 1)]            # g^-q
        spectrum = np.fft.fft(cos[back] + 1j * sin[back]) / (r - 1)
        forward = self.dft([xs[n] for n in powers], -1)
        products = [self.times(a, float(w.real), float(w.imag)) for a, w in zip(forward, spectrum)]
        conv = self.dft([products[0]] + products[:0:-1], -1)    # the inverse as a forward
        out: list[Complex | None] = [self.add(xs[0], forward[0])] + [None] * (r - 1)
        for m in range(r - 1):
            out[back[m]] = self.add(xs[0], conv[m])
        return out


def generator(r: int) -> int:
    """The least primitive root of the prime r."""
    factors = [f for f in range(2, r) if (r - 1) % f == 0 and all(f % d for d in range(2, f))]
    return next(g for g in range(2, r) if all(pow(g, (r - 1) // f, r) != 1 for f in factors))


#: Primes above this are Rader codelets (their pair sums, (r-1)^2 real
#: products, took 37 points' stage 10 s to compile).
RADER_FROM = 23


def split_factor(r: int) -> int:
    """The first radix a codelet of r points splits off: 4, then 2, 3, 5, ...
    (r itself when prime)."""
    for f in (4, 2, 3, 5, 7, 11, 13):
        if r % f == 0 and r != f:
            return f
    return r


def twiddle_table(size: int, sign: int) -> tuple[np.ndarray, np.ndarray]:
    """cos and sign*sin of 2*pi*m/size for m < size, as exact f64 literals.

    Each angle is reduced to a quadrant and an angle below pi/4 first, so
    quarter turns are exactly 0 and +-1 and the table is symmetric, as in
    FFT libraries (a plain np.cos(2*pi*m/size) gives 6e-17 where 0 is exact).
    """
    m = np.arange(size, dtype=np.int64)
    quadrant, rest = np.divmod(4 * m, size)
    small = 2 * rest <= size
    theta = np.where(small, rest, size - rest) * (np.pi / 2) / size
    c = np.where(small, np.cos(theta), np.sin(theta))
    s = np.where(small, np.sin(theta), np.cos(theta))
    cos = np.choose(quadrant, [c, -s, -c, s])
    sin = np.choose(quadrant, [s, c, -s, -c])
    return cos, sign * sin


def stage_body(body: Codelet, r: int, sign: int, real: str, compute: str, twiddled: bool,
               reals: bool, inputs: Callable[[int], str], twiddle: Callable[[int], str],
               scaled: Callable | None) -> list[str]:
    """A stage's codelet into ``body``: input ``inputs(2 n + c)`` (part c of point
    n, ``real``; none read for c = 1 with ``reals``) widened to ``compute``, the
    DFT, output k > 0 times twiddle (``twiddle(2 k - 2)``, ``twiddle(2 k - 1)``)
    where ``twiddled``, ``scaled`` on output 0 (on all without twiddles), rounded
    back to ``real``: the 2r results' names (the generic's; the FFT micro-kernels')."""
    xs = []
    for n in range(r):
        pair = []
        for c in range(2):
            if reals and c:
                pair.append(body.const(0.0))
            elif compute != real:
                body.lines.append(f"%x{n}_{c} = arith.extf {inputs(2 * n + c)} : {real} to {compute}")
                pair.append(f"%x{n}_{c}")
            else:
                pair.append(inputs(2 * n + c))
        xs.append(tuple(pair))
    ys = body.dft(xs, sign)
    if twiddled:        # the tables carry the scale
        ys = [ys[0]] + [_times(body, ys[k], twiddle(2 * k - 2), twiddle(2 * k - 1)) for k in range(1, r)]
    if scaled is not None:
        ys = [scaled(y) if k == 0 or not twiddled else y for k, y in enumerate(ys)]
    results = []
    for k in range(r):
        for c in range(2):
            v = ys[k][c]
            if compute != real:
                body.lines.append(f"%y{k}_{c} = arith.truncf {v} : {compute} to {real}")
                v = f"%y{k}_{c}"
            results.append(v)
    return results


def _times(body: Codelet, a, wr: str, wi: str):
    re = body.op("subf", body.op("mulf", a[0], wr), body.op("mulf", a[1], wi))
    im = body.op("addf", body.op("mulf", a[0], wi), body.op("mulf", a[1], wr))
    return re, im
