"""Which loops a linalg op's reads walk when an operand is permuted: a copy's
permutation (a transpose in generic form), the loop an elementwise op's
transposed operand walks contiguously, and the side of the register blocks
such reads are transposed in (xla-apply-schedules' transpose plans;
schedule_plan)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import dim_position


def copy_permutation(op: ir.Operation) -> list[int] | None:
    """The permutation of a linalg.generic that only copies its one input through
    a permuted map into an identity-mapped output (a transpose in generic form)."""
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    if len(op.operands) != 2 or len(body) != 1 or list(body[0].operands) != [block.arguments[0]]:
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if not maps[1].is_permutation or str(maps[1]) != str(ir.AffineMap.get_identity(maps[1].n_dims)):
        return None
    if not maps[0].is_permutation:
        return None
    return [dim_position(e) for e in maps[0].results]


def transposed_read_loop(op: ir.Operation) -> int | None:
    """The loop an elementwise generic's transposed operand walks contiguously
    (the last result of its map, which has the innermost loop elsewhere),
    when the output is row-major; None when no operand is transposed or two
    walk different loops. Other operands read rows or broadcast."""
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    rank = maps[-1].n_dims
    if len(op.results) != 1 or str(maps[-1]) != str(ir.AffineMap.get_identity(rank)):
        return None
    walked = set()
    for amap, value in zip(maps[:-1], op.operands):
        if not isinstance(value.type, ir.ShapedType) or not amap.results:
            continue                                   # a scalar or a rank-0 tensor: broadcast
        loops = [dim_position(e) for e in amap.results]
        if None in loops:
            return None
        if rank - 1 in loops[:-1]:
            walked.add(loops[-1])
    return walked.pop() if len(walked) == 1 else None


def permuted_read(op: ir.Operation) -> list[int] | None:
    """The loops (one per input dim) of the one permutation an elementwise
    generic reads an operand through, other than the identity, when the
    output is row-major and every other operand is read in its order
    (``x.T.astype(c64)`` of complex pairs: loops [1, 0, 2]); None when there
    is no such operand, two permutations, or a broadcast or scalar operand."""
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    identity = str(ir.AffineMap.get_identity(maps[-1].n_dims))
    if len(op.results) != 1 or str(maps[-1]) != identity:
        return None
    found = {str(amap) for amap in maps[:-1] if str(amap) != identity}
    if len(found) != 1 or any(not amap.is_permutation for amap in maps[:-1]):
        return None
    permuted = found.pop()
    amap = next(a for a in maps[:-1] if str(a) == permuted)
    return [dim_position(e) for e in amap.results]


def transpose_block(element_bytes: int) -> int | None:
    """The side of a square register block: 16 (transposed in four rounds of
    two-row unpacks, transpose.mlir), 8 for 8-byte elements. Measured on AVX2,
    interleaved: f32 1024x1024 16x16 0.63-0.79 ms against 8x8 1.0-2.2; f64
    512x1024 8x8 0.68-0.70 against 16x16 0.78-0.92 (16 rows of four registers
    spill); bytes 16x16 0.06 against 32x32 0.09 (flat shuffles, before the
    unpacks). At SSE4.2 f32 16x16 and 8x8 alike (0.28-0.32 ms)."""
    if element_bytes not in (1, 2, 4, 8):
        return None
    return 8 if element_bytes == 8 else 16
