"""Register tiles of whole vectors with peeled tails for the NHWC convolutions
whose rows and filter counts the dividing tiles (conv_plan) fit badly: 33
filters took an 11-wide tile (a ymm and three lanes in pieces at AVX2), a
26-pixel row 2-pixel tiles. conv.mlir's @xla_peel_tails peels the last, short
step of the pixels' and the filters' loops, so every tile keeps a static shape.

The choice compares estimated cycles per channel and filter tap of a whole
output row (all its pixels x all filters) under a model of the register tile:
one FMA a vector of accumulators, two a cycle; each accumulator's FMAs at
least FMA_LATENCY apart (too few accumulators leave the ports idle); one load
per filter vector and one broadcast per pixel, two a cycle, where a width that
is no whole number of vectors loads in power-of-two pieces (11 = 8 + 2 + 1);
a width that is no power-of-two count of vectors nor less than one (11, 24)
counts UNCLEAN_FACTOR times. By vector width and shape only, never by CPU name."""

from __future__ import annotations

from xlac.passes.cpu.plans.chunks import divisor
from xlac.passes.cpu.plans.schedule_plan import Machine

UNCLEAN_FACTOR = 3           # a tile of a width not _clean: measured 2-5x the time of clean ones
FMA_LATENCY = 4              # cycles between dependent FMAs (two ports x 4 cycles: 8 sums in flight)
PEELED_GAIN = 0.8            # a peeled tile is taken only where the model says 1.25x or more


def peeled_tile(ow: int, f: int, lanes: int, machine: Machine, accumulators: int,
                vectors_allowed: tuple[int, ...], dividing: tuple[int, int]) -> tuple[int, int]:
    """(pixels, filters) of the register tile: ``dividing`` (conv_plan's tile
    that divides the row and the filters) unless a tile of whole vectors with
    peeled tails is estimated PEELED_GAIN of its time or less.

    Why a margin: the real models' rows and filter counts (7-112 pixels,
    multiples of 16 filters) have dividing tiles the model rates about as
    well, and those were measured (docs/PERFORMANCE.md); only shapes those
    tiles fit badly change."""
    best = min(_candidates(ow, f, lanes, machine.registers, accumulators, vectors_allowed),
               key=lambda t: (_row_cycles(ow, f, *t, lanes), -t[0] * t[1]), default=None)
    if best is None:
        return dividing
    if _row_cycles(ow, f, *best, lanes) <= PEELED_GAIN * _row_cycles(ow, f, *dividing, lanes):
        return best
    return dividing


def _candidates(ow: int, f: int, lanes: int, registers: int, accumulators: int,
                vectors_allowed: tuple[int, ...]):
    """Tiles of ``vectors_allowed`` whole filter vectors (conv_plan's 4, 2 or 1
    at AVX2, 2 or 1 at AVX-512) whose filters' tail is clean too, or of all
    the filters where they are fewer than the lanes, with as many pixels as
    the registers hold: the accumulators, the filter vectors and a broadcast.

    Why fewer than the lanes: 4 filters over a 4607-pixel row (17 x 271, no
    divisor from 2 to 8) took 1 x 4 tiles, one accumulator, 6.4x the time of
    4606 pixels in 7 x 4 tiles (docs/PERFORMANCE.md)."""
    widths = [v * lanes for v in vectors_allowed if v * lanes <= f and _clean(f % (v * lanes), lanes)]
    if f < lanes:
        widths = [f]             # all the filters in part of one vector: only the pixels' tail is peeled
    for tf in widths:
        vectors = -(-tf // lanes)
        most = min(8, accumulators // vectors, (registers - vectors - 1) // vectors)
        for tw in range(1, min(most, ow) + 1):
            yield tw, tf


def _clean(width: int, lanes: int) -> bool:
    """A width the contraction lowers cleanly: a power-of-two count of whole
    vectors, or less than one vector. Others (24 = 3 ymm at AVX2 or a zmm and
    a ymm at AVX-512, 11, 9 = 8 + 1) measured 2-5x slower in the same work
    (docs/PERFORMANCE.md)."""
    vectors = width // lanes
    return width < lanes or (width % lanes == 0 and vectors & (vectors - 1) == 0)


def _pieces(width: int, lanes: int) -> int:
    """Loads that read ``width`` floats: whole vectors, then power-of-two pieces."""
    return width // lanes + bin(width % lanes).count("1")


def _tile_cycles(tw: int, tf: int, lanes: int) -> float:
    vectors = -(-tf // lanes)
    cycles = max(tw * vectors / 2, FMA_LATENCY, (_pieces(tf, lanes) + tw) / 2)
    return cycles if _clean(tf, lanes) else UNCLEAN_FACTOR * cycles


def _row_cycles(ow: int, f: int, tw: int, tf: int, lanes: int) -> float:
    """Cycles per channel and tap of one output row, the tails peeled."""
    rows = ((ow // tw, tw), (1, ow % tw))
    cols = ((f // tf, tf), (1, f % tf))
    return sum(n * m * _tile_cycles(w, c, lanes) for n, w in rows for m, c in cols if n and w and m and c)


def channel_step(c: int, lanes: int) -> int:
    """Channels a register tile's contraction takes at a time: the largest
    divisor of c up to the lanes, or the lanes with the last step peeled
    (conv.mlir) where that divisor is under half of them: 17 channels in 17
    steps of one ran 2.5x the time of 16 in two of 8 at AVX2 (the
    accumulators go through memory each step)."""
    step = divisor(c, lanes)
    return lanes if step < lanes // 2 and c > lanes else step
