"""Register blocks for a transpose of complex numbers as pairs of their parts.

xla-complex-as-pairs gives a complex tensor its parts' type with a minor dim
of 2 (`512x1024xcomplex<f32>` -> `512x1024x2xf32`); a transpose of it keeps
that dim last on both sides and swaps two others. The register-block
transpose (schedule_plan's, transpose.mlir) blocks the two swapped dims and
takes the parts' dim whole: each block is read as rows of the input's pairs,
its pairs put in their new places in registers, written as rows of the
output. Without it the copy walks the output one pair (two lanes) at a time,
each pair read from another row: a c64 512x1024 transpose 3.0-3.1 ms as a
scalar loop on complex<f32>, 0.91-0.97 in 4x4 blocks of pairs (f64 0.85-0.90),
a c128 one 3.0-3.5 ms pair by pair, 1.1-1.6 in 4x4 blocks.
"""

from __future__ import annotations

from xlac.passes.cpu.plans.chunks import thread_tiles

# pairs a block's side: measured interleaved, c64 512x1024 at x86-64-v3 4x4
# 0.97 ms, 8x8 1.8, 2x2 1.6; at x86-64-v4 4x4 0.91, 8x8 0.96; c128 4x4 1.6 ms
# (v4 1.1), 8x8 1.9, 2x2 2.0 (v4 1.7): each block's pairs move as 2-lane
# slices, which 4 rows of 4 pairs keep in registers
PAIR_SIDE = 4
# where a swapped dim is no multiple of 4 but both are even (fft2's 270):
# 2 x 2 blocks, still 1.6-2x the pair-by-pair walk in the figures above
SIDES = (PAIR_SIDE, 2)
PARTS = 2
MAX_RANK = 4                 # transpose.mlir's block schedules: 2-D to 4-D loop nests


def pair_transpose_block(extents: tuple[int, ...], permutation: list[int],
                         sides: tuple[int, ...] = SIDES) -> tuple[int, ...] | None:
    """The register block of a copy whose input dim ``k`` is loop
    ``permutation[k]`` (the output's loops in order), when both keep a
    parts' dim of 2 last and the input's contiguous dim of pairs is another
    loop than the output's: 4 x 4 pairs of those two loops, both parts, 1
    of every other loop (2 x 2 where a swapped dim is even but no multiple
    of 4); None when the copy is no such transpose or a swapped dim is odd
    (then it walks the output pair by pair)."""
    rank = len(extents)
    if not 3 <= rank <= MAX_RANK or extents[-1] != PARTS or permutation[-1] != rank - 1 or \
            any(e <= 0 for e in extents):             # dynamic dims: no blocks
        return None
    walked = permutation[-2]                 # the loop the input's pairs run along
    side = next((side for side in sides if extents[walked] % side == 0
                 and extents[-2] % side == 0), None)
    if walked == rank - 2 or side is None:
        return None
    block = [1] * rank
    block[walked] = block[-2] = side
    block[-1] = PARTS
    return tuple(block)


def pair_transpose_tiles(extents: tuple[int, ...], permutation: list[int],
                         threads: int) -> tuple[str, tuple[int, ...]] | None:
    """The block schedule and its parameters (the threads' chunks, then the
    block) for such a copy, or None."""
    block = pair_transpose_block(extents, permutation)
    if block is None:
        return None
    return f"xla_transpose_blocks_{len(extents)}d", thread_tiles(extents, threads, block) + block


def complex_transpose_in_blocks(shape: list[int], permutation: list[int]) -> bool:
    """Whether a transpose of a complex tensor of ``shape`` (its dims, the
    result's dim ``i`` being the operand's ``permutation[i]``), moved as
    pairs, gets the 4 x 4 register blocks above (complex_as_pairs moves a
    c64 transpose without them as 8-byte numbers; the 2 x 2 blocks were not
    measured against that)."""
    pairs = [shape[k] for k in permutation] + [PARTS]
    loops = [permutation.index(k) for k in range(len(permutation))] + [len(permutation)]
    return pair_transpose_block(tuple(pairs), loops, (PAIR_SIDE,)) is not None
