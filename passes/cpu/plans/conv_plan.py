"""Tile sizes for the NHWC convolutions (passes/cpu/schedules/conv.mlir),
read through contraction_plan: register tiles of pixels x filters that divide
the row and the filters (the 1-D vectorizer has no masks) or, where those fit
badly, tiles of whole vectors whose loops' last steps are peeled (conv_tails),
and whether the filters' loop goes outside the pixels'."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.cpu.plans.chunks import divisor, static_tiles
from xlac.passes.cpu.plans.conv_tails import channel_step, peeled_tile
from xlac.passes.cpu.plans.schedule_plan import CONTRACTIONS, LoopNest, Machine, Plan


def conv_plan(op: ir.Operation, nest: LoopNest, machine: Machine) -> Plan | None:
    """Any strides and dilations (the 1-D vectorizer handles them); tiles
    divide ow, f and c or their last steps are peeled: that vectorizer has no masks."""
    n, oh, ow, f, kh, kw, c = nest.extents
    lanes = machine.vector_bytes // nest.element_bytes
    accumulators = 16 if machine.registers >= 32 else 12
    tiles = [t for t in (_conv_tile(ow, f, lanes, v, accumulators)
                         for v in filter_vectors(machine)) if t]
    tc = channel_step(c, lanes)
    if not (tiles and tc):
        return None
    # most FMAs per value loaded (tw broadcasts + vectors filter loads per c):
    # a 7-wide row in one 7x8 tile, not seven 1x16 tiles re-reading the filter;
    # ties go to the first, the most filters
    tw, tf = max(tiles, key=lambda t: t[0] * t[1] / (t[0] * lanes + t[1]))
    if tw * tf < LATENCY_ACCUMULATORS * lanes:
        tw, tf = _tight_tile(ow, f, c, lanes, machine) or (tw, tf)
    tw, tf = peeled_tile(ow, f, lanes, machine, accumulators, filter_vectors(machine), (tw, tf))
    name = CONTRACTIONS["linalg.conv_2d_nhwc_hwcf"]
    divides = ow % tw == 0 and f % tf == 0      # filters outside: whole tiles only (the packed slice)
    if divides and (_filters_outer(op, nest, tw, tf) or _strided_filter_slice(nest, tf, machine)):
        cf, cn, ch, cw = static_tiles((f, n, oh, ow), machine.threads, (tf, 1, 1, tw),
                                      kh * kw * c)
        return Plan(name + "_filters_outer", (cn, ch, cw, cf, tw, tf, tc))
    chunks = static_tiles((n, oh, ow, f), machine.threads, (1, 1, tw, tf), kh * kw * c)
    return Plan(name, chunks + (tw, tf, tc))


LATENCY_ACCUMULATORS = 8    # two FMA ports x 4 cycles of latency: fewer independent sums leave ports idle
TIGHT_MIN_CHANNELS = 128     # register_tile_loops.MIN_K: from there the tile is a micro-kernel call


def _tight_tile(ow: int, f: int, c: int, lanes: int, machine: Machine) -> tuple[int, int] | None:
    """AVX2's 7 pixels x 2 vectors of filters (14 accumulators), for rows
    whose other tiles hold fewer sums than LATENCY_ACCUMULATORS, or None.

    Why: a 7-pixel row (ResNet's last stage, 7x7 pixels) took 7 x 8, seven
    accumulators, where two FMA ports of four cycles' latency need eight.
    7 x 16 needs 17 registers written plainly; its micro-kernel reads B's
    second vector from memory in each FMA (micro_kernels._tight_text), so
    only with enough channels for the micro-kernel call (compiled in, LLVM
    spilled two accumulators). Rows with a 2 x 32 tile keep it: 7 x 16 ran
    those 4-9% slower (docs/PERFORMANCE.md)."""
    if machine.registers >= 32 or lanes != 8 or ow % 7 or f % (2 * lanes) or c < TIGHT_MIN_CHANNELS:
        return None
    return 7, 2 * lanes


FILTER_IN_L2 = 512 * 1024    # a larger filter is read from memory once per row unless filters go outside


def _filters_outer(op: ir.Operation, nest: LoopNest, tw: int, tf: int) -> bool:
    """Filters outside the pixels where the filter does not stay in cache and
    re-reading it costs more than re-reading the input: pixels outside read
    all of the filter once per tw-pixel tile, filters outside read the input
    once per tf-filter slice (and each slice from L2, conv.mlir).

    Why not only a filter larger than the input: the U-Net's 3x3x256x128
    filter (1.2 MB) on 2x32x32x256 pixels (2 MB) was read 512 times, 600 MB,
    where filters outside re-read the input 8 times, 16 MB (AVX2: 78 -> 34 ms).
    """
    n, oh, ow, f, *_ = nest.extents
    input_bytes, filter_bytes = (nest.element_bytes * math.prod(v.type.shape) for v in op.operands[:2])
    filter_reads = n * oh * (ow // tw) * filter_bytes
    input_reads = (f // tf) * input_bytes
    return filter_bytes > FILTER_IN_L2 and filter_reads > input_reads


L1_MEASURED_BYTES = 48 * 1024    # the plans' L1 where the level does not say (a named level)


def _strided_filter_slice(nest: LoopNest, tf: int, machine: Machine) -> bool:
    """AVX2's compiled-in tiles (fewer channels than a micro-kernel call) that
    read tf of each filter row's f values, from a kh x kw x c x tf slice
    larger than L1: with pixels outside, every tw-pixel tile re-reads that
    slice from L2 in lines f floats apart; filters outside pack it into one
    contiguous stream (xla_pack_filter_slice).

    Why: the 3x3 64 -> 64 convolution at 56x56 (ResNet's first stage, 2 x 32
    tiles, a 72 KiB slice in 256-byte strides) ran at 50-62 GFLOP/s on one Zen 4
    core; packed, the same tiles took 0.64x the time, bitwise equal
    (docs/PERFORMANCE.md). AVX-512's 8 x 32 measured the same either way
    (1.009): left as it was."""
    *_, f, kh, kw, c = nest.extents
    slice_bytes = kh * kw * c * tf * nest.element_bytes
    return (machine.vector_bytes == 32 and c < TIGHT_MIN_CHANNELS and tf < f
            and slice_bytes > (machine.l1d_bytes or L1_MEASURED_BYTES))


def filter_vectors(machine: Machine) -> tuple[int, ...]:
    """The filter widths, in vectors, a register tile may take, widest first.

    Why four with AVX2's 16 registers (SSE unmeasured, unchanged): neither 6
    pixels nor 3 vectors of filters divide most rows and filter counts (32
    pixels, 128 filters), so a tile holds 8 accumulators either way; 2 pixels
    x 4 vectors ran ResNet-18 10% and the U-Net 3.6% faster than 4 x 2 at
    x86-64-v3 (docs/PERFORMANCE.md). 2 pixels at most: 3 x 32 needs 17 registers."""
    return (4, 2, 1) if machine.vector_bytes == 32 else (2, 1)


def _conv_tile(ow: int, f: int, lanes: int, vectors: int,
               accumulators: int) -> tuple[int, int] | None:
    """(pixels, filters) of a register tile: four vectors of filters, up to
    two (any divisor of f when it is no multiple of the lanes), or exactly one."""
    if vectors == 4:
        tf = 4 * lanes if f % (4 * lanes) == 0 else None
    elif vectors == 2:
        tf = divisor(f, 2 * lanes, lanes) or divisor(f, 2 * lanes)
    else:
        tf = lanes if f % lanes == 0 else None
    if not tf:
        return None
    tw = divisor(ow, 2 if vectors == 4 else min(8, accumulators // max(1, tf // lanes)))
    return (tw, tf) if tw else None
