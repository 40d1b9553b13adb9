"""Plans of fft_fast: which radices an axis is split into, and where their
twiddles fold; chirp-z's convolution length for axes without a plan."""

from __future__ import annotations

import functools
import math

#: Largest radix N1 split off per level (the DFT matrix is 2*N1 x 2*N1).
MAX_RADIX = 16
#: A (sub-)transform this short or shorter is one direct DFT matmul.
MAX_DIRECT = 64
#: A prime factor up to this is a direct DFT matmul too (808 = 8 * 101).
MAX_PRIME = 128
#: Shorter axes keep the direct linalg.generic DFT (as fast, fewer ops).
FAST_FROM = 16
#: Largest per-level constant of DFT matrices with the twiddles folded in.
FOLD_BYTES = 1 << 21


def fast_plan(size: int) -> list[int] | None:
    """The radices (product ``size``) of the fast path, or None where the old
    direct DFT is kept: short axes and those with a prime factor > MAX_PRIME."""
    if size < FAST_FROM:
        return None
    plan = _cheapest(size)
    return None if plan is None else list(plan[1])


#: A level's cost beyond its matmul (transposes, one more pass over the data),
#: in the units of `_width` (real multiply-adds per point / 4). Fitted to
#: in-process alternations on Zen 4 (docs/PERFORMANCE.md): 720 as 12*12*5
#: (or 4*12*15) beat 16*45 and 12*60, 1024 as 16*8*8 (or 16*16*4) beat 16*64,
#: 360 as 12*30 beat 15*24 and 12*6*5, 64 as 16*4 beat one 64-point matmul.
LEVEL_COST = 24


def _width(radix: int) -> int:
    """A radix-r matmul's cost per point: its 2r-column rows in whole 8-lane
    vectors (45's rows of 90 columns end in a partial vector: 16*45 ran 1.4x
    slower than 12*12*5, whose flops are half)."""
    return -(-radix // 4) * 4


@functools.cache
def _cheapest(size: int) -> tuple[int, tuple[int, ...]] | None:
    """(cost, radices) of the cheapest plan for ``size``: a direct leaf (up to
    MAX_DIRECT, or a prime up to MAX_PRIME), or a radix up to MAX_RADIX split
    off and the rest planned alike; a level whose twiddles do not fold into
    its matrices pays a twiddle pass too."""
    best = None
    if size <= MAX_DIRECT or (size <= MAX_PRIME and _is_prime(size)):
        best = (_width(size), (size,))
    for radix in range(min(MAX_RADIX, size // 2), 1, -1):    # ties: the larger radix first
        if size % radix:
            continue
        rest = _cheapest(size // radix)
        if rest is None:
            continue
        level = _width(radix) + LEVEL_COST * (1 if folds_twiddle(radix, size // radix, "f64") else 2)
        if best is None or level + rest[0] < best[0]:
            best = (level + rest[0], (radix,) + rest[1])
    return best


def _is_prime(size: int) -> bool:
    return size > 1 and all(size % d for d in range(2, math.isqrt(size) + 1))


def has_fast_path(size: int) -> bool:
    """Whether an axis of ``size`` runs as FastStage: a Cooley-Tukey plan, or
    chirp-z (fft_chirp) for a long one with a prime factor > MAX_PRIME."""
    return fast_plan(size) is not None or chirp_length(size) is not None


#: Lengths from which an axis without a Cooley-Tukey plan goes chirp-z
#: (shorter ones keep the direct DFT: three transforms of >= 2N-1 points
#: cost more than N*N products there).
CHIRP_FROM = 128


def chirp_length(size: int) -> int | None:
    """The convolution length of chirp-z for ``size``: the cheapest by the
    plans' cost (`_cheapest` per point times M) of the M >= 2*size - 1 up to
    twice that whose plan has no prime leaf; None below CHIRP_FROM."""
    if size < CHIRP_FROM:
        return None
    least = 2 * size - 1
    costs = [(length * plan[0], length) for length in range(least, 2 * least + 1)
             if (plan := _cheapest(length)) is not None and max(plan[1]) <= MAX_DIRECT]
    return min(costs)[1]


def folds_twiddle(n1: int, n2: int, compute: str) -> bool:
    """Whether a level's twiddles go into its DFT matrices (one per n2, 4*N*n1
    values) instead of a pass of their own: while that constant stays small,
    and for radices that are a multiple of 4 (rows of 2*n1 whole 8-lane
    vectors; a batched matmul of 30x30 blocks, fft2 360x270, was slower than
    the twiddle pass)."""
    return n1 % 4 == 0 and 4 * n1 * n1 * n2 * 8 <= FOLD_BYTES
