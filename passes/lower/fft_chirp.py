"""Bluestein's chirp-z transform for fft_fast: lengths with a prime factor
above MAX_PRIME in O(N log N) instead of the O(N^2) direct DFT.

Why: 2 * 257 points (or any length with a large prime factor) had no
Cooley-Tukey plan and ran as one `linalg.generic` summing N terms per
output, scalar code (a 4099-point axis: 16.8 M complex products per row).
With n*k = (n^2 + k^2 - (k-n)^2) / 2 and the chirp c[m] = W^(m^2 / 2),
W = exp(sign 2 pi i / N),

    X[k] = c[k] * sum_n (x[n] c[n]) * conj(c[k-n])

is a convolution, done circularly at a length M >= 2N-1 that has a cheap
plan: forward transform of the chirped input (zero-padded to M), times the
constant spectrum of the conjugate chirp (divided by M, exact in numpy's
f64 FFT), inverse transform, the first N entries times the chirp.
"""

from __future__ import annotations

import numpy as np

from xlac.passes.lower.fft_plan import chirp_length


class ChirpZ:
    """The chirp-z transform of FastStage (mixed into it)."""

    def chirp_z(self, x: str, batch: int, size: int, sign: int) -> str:
        """(B, N, 2) pairs -> their N-point DFTs (B, N, 2) via two M-point
        transforms; every product in the arithmetic's type."""
        length = chirp_length(size)
        cos, sin = self._twiddles(2 * size, sign)
        square = np.arange(size) ** 2 % (2 * size)                 # c[n] = W_2N^(n^2)
        chirp = cos[square] + 1j * sin[square]
        chirped = self.times_table(x, [batch, size, 2], chirp)
        padded = self._zero_padded(chirped, batch, size, length)
        spectrum = self._transform(padded, batch, length, -1)
        product = self.times_table(spectrum, [batch, length, 2], self._filter(chirp, length))
        conv = self._transform(product, batch, length, 1)
        head = self._slice(conv, [batch, length, 2], [0, 0, 0], [batch, size, 2])
        return self.times_table(head, [batch, size, 2], chirp)

    @staticmethod
    def _filter(chirp: np.ndarray, length: int) -> np.ndarray:
        """The spectrum (sign -1) of conj(c[j]) at j and M - j, over M: the
        inverse transform's 1/M folded in."""
        size = chirp.shape[0]
        kernel = np.zeros(length, dtype=np.complex128)
        kernel[:size] = np.conj(chirp)
        kernel[length - size + 1:] = np.conj(chirp[1:][::-1])
        return np.fft.fft(kernel) / length

    def _zero_padded(self, x: str, batch: int, size: int, length: int) -> str:
        zeros = [batch, length - size, 2]
        out = self._fresh("padded")
        self._emit(f"{out}_z = stablehlo.constant dense<0.0> : {self._t(zeros)}",
                   f"{out} = stablehlo.concatenate {x}, {out}_z, dim = 1 : "
                   f"({self._t([batch, size, 2])}, {self._t(zeros)}) -> "
                   f"{self._t([batch, length, 2])}")
        return out
