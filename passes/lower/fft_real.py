"""Real-input FFTs of even length N as complex FFTs of length N/2 (fft_fast).

Why: RFFT through the complex transform of (x, 0) does twice the work. The
classic packing instead reads x as N/2 complex values z[n] = x[2n] + i*x[2n+1]
(in FastStage's pair layout that is only a reshape), transforms those, and
separates the spectra of the even and odd samples with one elementwise pass:
  X[k] = (Z[k] + conj(Z[M-k])) / 2 + W_N^k * (Z[k] - conj(Z[M-k])) / (2i),
for k = 0..M (M = N/2, Z[M] = Z[0]). IRFFT runs it backwards:
  Z'[k] = (X[k] + conj(X[M-k])) + i * W_N^-k * (X[k] - conj(X[M-k])),
whose unnormalized length-M inverse is N * (x[2n] + i*x[2n+1]): the
helper's one division by N then gives x.
Each output is linear in (Re, Im) of the two inputs with per-k coefficients
(exact f64 tables, rounded once), so the pass is a*P + swap(a)*Q + b*R +
swap(b)*S on pairs: every operand used once, one fused loop.
"""

from __future__ import annotations

import numpy as np


class RealSpectrum:
    """The half-length RFFT / IRFFT of FastStage (mixed into it)."""

    def half_length(self, flat: str, batch: int, kind: str, size: int, sign: int) -> str:
        """(B, N) real -> (B, M+1) complex (r2c) or (B, M+1) complex -> (B, N) real (c2r)."""
        half = size // 2
        if kind == "r2c":
            z = self._reshape(flat, [batch, half, 2], self.real, [batch, size])
            z = self._transform(z, batch, half, sign)
            spectrum = self._split_spectrum(z, batch, size, sign)
            return self._from_pairs(spectrum, batch, half + 1, half + 1, self.complex)
        pairs = self._to_pairs(flat, batch, half + 1, "c2c", half + 1)
        z = self._merge_spectrum(pairs, batch, size, sign)
        z = self._transform(z, batch, half, sign)
        return self._reshape(z, [batch, size], self.real, [batch, half, 2])

    def _split_spectrum(self, z: str, batch: int, size: int, sign: int) -> str:
        """Z (B, M, 2) -> X[k] for k = 0..M (B, M+1, 2)."""
        half = size // 2
        first = self._slice(z, [batch, half, 2], [0, 0, 0], [batch, 1, 2])
        shape = [batch, half + 1, 2]
        ext = self._fresh("zext")
        self._emit(f"{ext} = stablehlo.concatenate {z}, {first}, dim = 1 : "
                   f"({self._t([batch, half, 2])}, {self._t([batch, 1, 2])}) -> {self._t(shape)}")
        a = self._convert(ext, shape, self.real, self.compute)
        cos, sin = self._twiddles(size, sign)
        c, s = cos[: half + 1] / 2, sin[: half + 1] / 2
        tables = ([0.5 + s, 0.5 + s], [c, -c], [0.5 - s, s - 0.5], [c, c])
        return self._narrow(self._combine(a, shape, tables), shape)

    def _merge_spectrum(self, pairs: str, batch: int, size: int, sign: int) -> str:
        """X (B, M+1, 2) -> Z' (B, M, 2); the imaginary parts of X[0] and X[M]
        are ignored (as numpy's and pocketfft's irfft), their coefficients 0."""
        half = size // 2
        x = self._convert(pairs, [batch, half + 1, 2], self.real, self.compute)
        cos, sin = self._twiddles(size, sign)
        c, s = cos[:half], sin[:half]
        p, q, r, t = [1 - s, 1 - s], [-c, c], [1 + s, -(1 + s)], [-c, -c]
        p[1], q[0], r[1], t[0] = (np.where(np.arange(half) == 0, 0.0, v)
                                  for v in (p[1], q[0], r[1], t[0]))
        shape = [batch, half, 2]
        head = self._slice(x, [batch, half + 1, 2], [0, 0, 0], shape, self.compute)
        z = self._combine(head, shape, (p, q, r, t), mirror_of=(x, [batch, half + 1, 2]))
        return self._narrow(z, shape)

    def _term(self, a: str, shape: list[int], name: str, mirror_of) -> str:
        """a, swap(a), b or swap(b), each its own reverse of the source (a
        reverse read twice would be materialized, not fused)."""
        ct = self.compute
        dims = {"p": [], "q": [2], "r": [1], "s": [1, 2]}[name]
        source, source_shape = (a, shape) if name in "pq" or mirror_of is None else mirror_of
        if not dims:
            return a
        if source_shape != shape:                 # b[k] = x[M-k] for k < M: x[1:] reversed
            source = self._slice(source, source_shape, [0, 1, 0], source_shape, ct)
        st = self._t(shape, ct)
        return self._op("reverse", source, st, st, f", dims = {dims}")

    def _combine(self, a: str, shape: list[int], tables, mirror_of=None) -> str:
        """a*P + swap(a)*Q + b*R + swap(b)*S with b[k] = a[M-k] (``a`` of M+1
        rows) or, with ``mirror_of`` = (x, its shape), b[k] = x[M-k] for k < M."""
        ct = self.compute
        tp = self._t(shape, ct)
        terms = []
        for name, table in zip("pqrs", tables):
            value = self._term(a, shape, name, mirror_of)
            coef = self._fresh(f"k{name}")
            rows = [shape[1], 2]
            data = np.stack([np.asarray(table[0]), np.asarray(table[1])], -1)
            self._emit(f"{coef}_0 = stablehlo.constant dense<{self._hex(data)}> : "
                       f"{self._t(rows, ct)}",
                       f"{coef} = stablehlo.broadcast_in_dim {coef}_0, dims = [1, 2] : "
                       f"({self._t(rows, ct)}) -> {tp}",
                       f"{coef}_x = stablehlo.multiply {value}, {coef} : {tp}")
            terms.append(f"{coef}_x")
        total = terms[0]
        for term in terms[1:]:
            out = self._fresh("sum")
            self._emit(f"{out} = stablehlo.add {total}, {term} : {tp}")
            total = out
        return total
