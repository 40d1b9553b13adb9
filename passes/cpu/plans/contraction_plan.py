"""Tile sizes for the contractions (passes/cpu/schedules/matmul.mlir, conv.mlir).

Read by xla-apply-schedules. The register tile of C is cut for the CPU: as
many accumulators as leave room for the operands (8 x 32 f32 with AVX-512's
32 registers, 6 x 16 with AVX2's 16; f64 and i64 tiles half as wide: as many
registers, half the lanes), and, where the extents allow it,
tiles, blocks and thread chunks that divide them: a static tile needs no
masks, and a masked tile is several times slower (every load and FMA under a
mask). Only when nothing divides does an edge tile stay masked.
"""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.cpu.plans.chunks import CHUNK_WORK, CHUNKS_PER_THREAD, divisor, static_tiles
from xlac.passes.cpu.plans.conv_plan import L1_MEASURED_BYTES, conv_plan
from xlac.passes.cpu.plans.schedule_plan import (
    CONTRACTIONS,
    POOLINGS,
    SHORT_K,
    LoopNest,
    Machine,
    Plan,
    loop_nest,
)
from xlac.passes.cpu.plans.transposed_b import (
    FUSED_B_ROWS_AVX2,
    b_producer,
    is_transpose_2d,
    transpose_apart_avx2,
    whole_k_transposed_panels_avx2,
)
from xlac.passes.cpu.plans.whole_k_blocks import (
    BLOCK,
    all_rows_column_chunks,
    min_whole_k_row_tiles,
    whole_block_chunks,
    whole_k_block,
    whole_k_widened_b_avx2,
)
from xlac.passes.cpu.plans.widened_a import is_widening, with_a_widening

MIN_TILE_M = 4               # fewer rows per register tile reuse each B load too little


def contraction_plan(op: ir.Operation, machine: Machine, fuse_producers: bool = True) -> Plan | None:
    """The schedule of a matmul, batch matmul, NHWC convolution or pooling whose
    output starts from a linalg.fill (the schedule fuses it), or None. With
    ``fuse_producers``, a transpose or widening making B is taken into the
    matmul's packing of B (b_producer)."""
    nest = loop_nest(op)
    init = op.operands[-1].owner
    if nest is None or nest.element_bytes not in (4, 8) or op.name not in (*CONTRACTIONS, *POOLINGS) \
            or not hasattr(init, "name") or init.name != "linalg.fill" \
            or math.prod(nest.extents) < 256:
        return None
    if op.name in POOLINGS and nest.element_bytes != 4:
        return None
    if op.name == "linalg.conv_2d_nhwc_hwcf":
        return conv_plan(op, nest, machine)
    if op.name in POOLINGS:
        return _pooling_plan(nest, machine, _padded_alone(op), op.name == "linalg.depthwise_conv_2d_nhwc_hwc")
    plan = _matmul_plan(op, nest, machine, fuse_producers)
    return with_a_widening(op, plan) if fuse_producers else plan


PEEL_ROWS_FROM = 32         # m >= 32 tiles: one masked tile costs less than narrower ones
# AVX2 from 16 tiles (96 rows): the rows left over run as a call of the narrower
# micro-kernel (xla-micro-kernel-calls), not masked; 128 rows in 6-row tiles and a
# 2-row edge beat 4-row tiles (8 accumulators against 12; attention's batched dots
# at x86-64-v3 0.88-0.92 of the time; AVX-512's 8 rows: 132 x 256 x 1024 not faster)
PEEL_ROWS_FROM_AVX2 = 16


def register_tile(m: int, n: int, machine: Machine, element_bytes: int = 4) -> tuple[int, int]:
    """(rows, columns) of C held in registers: columns two vectors wide, rows as
    many as fit beside the two B vectors and the broadcast A, dividing m and n
    where possible."""
    lanes = machine.vector_bytes // element_bytes
    rows = (machine.registers - 3) // 2 if machine.registers < 32 else 8
    tn = 2 * lanes if n % (2 * lanes) == 0 else lanes if n % lanes == 0 else 2 * lanes
    tm = divisor(m, rows) if m % rows else rows
    # a divisor keeps every tile static; with none worth having (m = 197), or
    # fewer rows than fit on a tall matrix (1024 = 4 x 256 with AVX2's 6 rows:
    # 25.7 -> 36.6 GFLOP/s on one core), the schedule peels the rows left over
    # into one last masked tile
    peel_from = PEEL_ROWS_FROM_AVX2 if machine.vector_bytes == 32 else PEEL_ROWS_FROM
    if not tm or tm < MIN_TILE_M or (tm < rows and m >= peel_from * rows):
        return rows, tn
    return tm, tn


def _matmul_plan(op: ir.Operation, nest: LoopNest, machine: Machine, fuse_producers: bool) -> Plan:
    *batch, m, n, k = nest.extents
    size = nest.element_bytes
    tm, tn = register_tile(m, n, machine, size)
    if op.name == "linalg.batch_matmul":
        tm, tn = _no_unit_remainder(m, tm), _no_unit_remainder(n, tn)
    chunks = static_tiles(tuple(nest.extents[:-1]), machine.threads, (1,) * len(batch) + (tm, tn), k,
                          _chunks_per_thread(op, k, n, size, machine))
    if not batch:
        chunks = _ragged_rows(chunks, m, n, k, tm, machine)
    bk = _block(k, 1)
    if op.name == "linalg.batch_matmul":
        whole = m % tm == 0 and n % tn == 0
        if n % tn == 0 and _k_unblocked(k, n, size) \
                and all(c == 0 or e % c == 0 for e, c in zip(nest.extents, chunks)):
            # rows left over (m = 512 in 6-row tiles) peeled: still no zero fill pass over C
            if _pack_batch_b(k, n, tn, size, machine):
                return Plan("xla_batch_matmul_short_k_packed", chunks + (tm, tn))
            return Plan(f"xla_batch_matmul_short_k{'' if whole else '_peeled'}", chunks + (tm, tn))
        return Plan(f"xla_batch_matmul{'' if whole else '_peeled'}", chunks + (bk, tm, tn))
    whole = m % tm == 0 and n % tn == 0 and all(c == 0 or e % c == 0
                                                for e, c in zip(nest.extents, chunks))
    columns = _column_chunks(m, n, min(k, BLOCK), tn, machine, size) if n % tn == 0 else None
    producer = b_producer(op) if fuse_producers and size == 4 else None
    if producer is not None and machine.registers >= 32 and is_transpose_2d(producer):
        fused = _fused_b_avx512(m, n, k, bk, tm, tn, columns, machine, producer)
        if fused is not None:
            return fused
    if k <= SHORT_K and whole and not columns:
        return Plan("xla_matmul_short_k", chunks + (tm, tn))
    chunks = columns or chunks
    bn = _block(chunks[-1] or n, tn)
    if not _static_b_blocks(n, k, chunks[-1] or n, bn, bk, tn):
        return Plan("xla_matmul_peeled", chunks + (bn, bk, tm, tn))
    if producer is not None and whole_k_transposed_panels_avx2(k, tn, producer, machine):
        return Plan("xla_matmul_fused_b_short_k_avx2", chunks + (bn, k, tm, tn), (producer,))
    whole = producer is not None and whole_k_widened_b_avx2(k, chunks[-1] or n, bn, bk, tn, producer, machine)
    if whole:
        return Plan("xla_matmul_block_packed_fused_b", chunks + whole + (tm, tn), (producer,))
    # AVX2 code packs whole blocks with row tiles outside (@xla_matmul_block_packed);
    # the fused panels keep column tiles outside, a loss there for many rows
    # (B transposed, 1024^3: 100 -> 82 GFLOP/s), a gain for few (256 x 256 x 8000: 88 -> 107)
    few_rows = machine.registers >= 32 or m <= FUSED_B_ROWS_AVX2 and not transpose_apart_avx2(m, k, producer)
    # the fused panels are made in 16 x 16 blocks of 4-byte elements
    if producer is not None and few_rows and bk % 16 == 0 and tn % 16 == 0:
        if bk == k and machine.registers < 32:
            # k in one block: tiles from zeros in registers, no zero fill pass over C
            # (GPT-2's 256 x 256 x 8000 LM head: its 8 MB C was zeroed, read back, written)
            # AVX2's panels in 8 x 8 register transposes (a 16 x 16 block spills its 16 ymm)
            name = "xla_matmul_fused_b_short_k" + ("_avx2" if machine.vector_bytes == 32 else "")
            return Plan(name, chunks + (bn, bk, tm, tn), (producer,))
        return Plan("xla_matmul_fused_b", chunks + (bn, bk, tm, tn), (producer,))
    block_chunks = whole_block_chunks(m, n, k, chunks, tm, tn, size, machine)
    if machine.registers < 32:
        if producer is not None and is_widening(producer):     # rows of a block: no transposes
            return Plan("xla_matmul_block_packed_fused_b", chunks + (bn, bk, tm, tn), (producer,))
        chunks = block_chunks or chunks
        bn, bk = whole_k_block(k, chunks[-1] or n, bn, bk, tn, size, machine)
        return Plan(block_packed_sequence(k, bk, bn, tn), chunks + (bn, bk, tm, tn))
    min_rows = min_whole_k_row_tiles(machine, tm, tn, size) * tm
    if block_chunks and chunks[0] >= min_rows and (block_chunks[0] or m) >= min_rows:
        chunks = block_chunks        # row chunks that took the whole-k block already: columns instead
    whole_bn, whole_bk = whole_k_block(k, chunks[-1] or n, bn, bk, tn, size, machine)
    if whole_bk > BLOCK and (chunks[0] or m) >= min_rows:
        # AVX-512 too: all of k in one packed block, row tiles outside (1024^3,
        # one core: 110 -> 126 GFLOP/s median, 127 -> 155 best; docs/PERFORMANCE.md),
        # where enough row tiles read each block from L2; fewer are faster with
        # the panels in L1, where it holds them (one core, 128 x 1024 x 1024:
        # 128 against 120 GFLOP/s; 64 x 1024 x 256: 138 against 129)
        return Plan("xla_matmul_block_packed", chunks + (whole_bn, whole_bk, tm, tn))
    if chunks[0] and not chunks[1] and chunks[0] < m \
            and (width := all_rows_column_chunks(m, n, k, tm, tn, size, machine)):
        # short row chunks would each pack all of B's panels: columns of all rows instead
        return Plan("xla_matmul_block_packed", (0, width, width, k, tm, tn))
    return Plan("xla_matmul", chunks + (_row_block(chunks[0] or m, min(k, BLOCK), tm, size),
                                        bn, bk, tm, tn))


def block_packed_sequence(k: int, bk: int, bn: int, tn: int) -> str:
    """AVX2's and SSE's block-packed sequence: with all of a k beyond BLOCK in
    one block (whole_k_block) of more than one column tile, the tiles start
    from zeros in registers (@xla_matmul_block_packed_zero_start: no fill pass
    over C, no read of C in each tile; 1024^3 at x86-64-v3, two threads of a
    Zen 4: 0.984 of the time, alternated in one process, docs/PERFORMANCE.md); shorter blocks
    (several passes over C) keep @xla_matmul_block_packed, as do blocks one
    tile wide (ViT's 16-column chunks, 788 x 768 x 192): there the fused loops leave
    the row edge's kernel call directly in the thread chunk, where the OpenMP
    lowering's memref.alloca_scope then stays and fails scf-to-cf. Same k
    order from 0 either way: the same bits."""
    return ZERO_START if bk == k > BLOCK and bn > tn else "xla_matmul_block_packed"


ZERO_START = "xla_matmul_block_packed_zero_start"
F64_CHUNKS_PER_THREAD = 2   # AVX-512 f64 matmuls whose B is beyond L2: fewer, taller row chunks


def _ragged_rows(chunks: tuple[int, ...], m: int, n: int, k: int, tm: int, machine: Machine) -> tuple[int, ...]:
    """``chunks`` where they split the matmul; else row chunks of whole
    register tiles, the last one short. static_tiles splits only a dim its
    tiles divide: m and n both off the tile (645 x 1000 x 350 in 6 x 16
    tiles) left the whole matmul on one thread (issue 39's big.matmul.bf16
    at x86-64-v3: 1.48x XLA). Each thread's rows are summed over k as before."""
    if machine.threads == 1 or any(0 < c < e for c, e in zip(chunks, (m, n))):
        return chunks
    parts = min(machine.threads * CHUNKS_PER_THREAD, m // tm)
    if parts < 2 or m * n * k // CHUNK_WORK < 2:
        return chunks
    return (-(-m // parts) + tm - 1) // tm * tm, 0


def _chunks_per_thread(op: ir.Operation, k: int, n: int, element_bytes: int, machine: Machine) -> int:
    """Row chunks per thread: F64_CHUNKS_PER_THREAD for an AVX-512 f64 matmul
    whose B is larger than L2 keeps beside A (A_IN_L2), else the usual. Each
    chunk of rows packs all of B again, panel by panel, and an f64 B of that
    size comes from L3 each time (512^3 on two threads: B's 2 MiB packed 8
    times in 64-row chunks, 4 times in 128-row ones: 4.3 -> 4.0 ms median,
    XLA 3.7; docs/PERFORMANCE.md). f32 (whose B is half the bytes) and AVX2's
    block-packed plans keep theirs; the k order of each sum is the same either way."""
    if element_bytes == 8 and machine.registers >= 32 and op.name == "linalg.matmul" \
            and k * n * element_bytes > A_IN_L2:
        return F64_CHUNKS_PER_THREAD
    return CHUNKS_PER_THREAD


def _fused_b_avx512(m: int, n: int, k: int, bk: int, tm: int, tn: int, columns: tuple[int, int] | None,
                    machine: Machine, producer: ir.Operation) -> Plan | None:
    """AVX-512's plan for B made by a transpose fused into its panels
    (GPT-2's [n, k] weights), or None. Before the short-k plan, which
    made B in a kernel of its own (a 768 x 256 transpose written and read
    back) and left the bias to a kernel of its own too: the fused-B plans
    have epilogue variants (epilogue_plan). Chunks of columns: with chunks of
    rows each one made all of B again (256 x 1024 x 256, k = 1024: eight
    32-row chunks, each transposing all 1 MB of B). k in one block: the
    tiles start from zeros in registers, no fill pass over C."""
    chunks = columns or (0, static_tiles((n,), machine.threads, (tn,), m * k)[0])
    bn = _block(chunks[-1] or n, tn)
    if bk % 16 or tn % 16 or not _static_b_blocks(n, k, chunks[-1] or n, bn, bk, tn):
        return None
    name = "xla_matmul_fused_b_short_k" if bk == k else "xla_matmul_fused_b"
    return Plan(name, chunks + (bn, bk, tm, tn), (producer,))


def _k_unblocked(k: int, n: int, element_bytes: int) -> bool:
    """Whether a batch matmul's register tiles run all of k, starting from
    zeros in registers (the short-k schedules): k in one block, or a batch's
    whole k x n of B in L2, where k blocks keep nothing closer (AVX2's 6 x 16
    tiles and AVX-512's 8 x 32 alike). Blocked, C is zeroed in a pass of its own and every
    tile reads it back once per block (attention's P.V, 8 x 512 x 512 x 64:
    k = 512 in two blocks, B 128 KiB a batch). Each element is still summed
    over k in order from 0."""
    if k <= SHORT_K:
        return True
    return k * n * element_bytes <= BLOCK * BLOCK * 4


CACHE_LINE = 64
# x86 L1 data caches are virtually indexed: sets x line = a 4 KiB page, 64 sets
# whatever their size (32 KiB 8-way, 48 KiB 12-way)
L1_SETS = 4096 // CACHE_LINE


def _pack_batch_b(k: int, n: int, tn: int, element_bytes: int, machine: Machine) -> bool:
    """Whether a short-k batch matmul packs each batch's B panel by panel
    (@xla_batch_matmul_short_k_packed): the 16-register levels' tiles (AVX2's
    6 x 16, SSE's 6 x 8), whose panels read in place fall into too few L1 sets.
    Attention's dots at x86-64-v3 on a Zen 4, two threads: P.V (8 x 512 x 512
    x 64) 0.76-0.88 of the time, Q.K^T (8 x 512 x 64 x 512) 0.81-0.85, ViT's
    P.V (12 x 197 x 197 x 64) 0.92; x86-64-v2 0.92-0.94. AVX-512's
    8 x 32 tiles (two lines of each B row a step, more rows to reuse each)
    measured slower packed: Q.K^T 1.11, ViT's P.V 1.03 (docs/PERFORMANCE.md)."""
    return machine.registers < 32 and _b_panel_conflicts(k, n, tn, element_bytes, machine)


def _b_panel_conflicts(k: int, n: int, tn: int, element_bytes: int, machine: Machine) -> bool:
    """Whether a k-deep, tn-wide panel of a row-major k x n B, read in place,
    falls into too few L1 sets to stay there while the packed (contiguous)
    panel would: B's rows a power of two apart map the panel onto a fraction
    of the sets (attention's P.V, 512 x 64 f32 with AVX2's 16 columns: rows
    256 B apart, a 32 KiB panel in 16 of the 64 sets, 8 KiB of a 32 KiB L1).
    From the cache's geometry, not the CPU model."""
    l1 = machine.l1d_bytes or L1_MEASURED_BYTES
    panel = k * tn * element_bytes
    if panel > l1:
        return False          # packed, it would not stay in L1 either
    row = n * element_bytes
    sets = {(r * row + offset) // CACHE_LINE % L1_SETS
            for r in range(k) for offset in range(0, tn * element_bytes, CACHE_LINE)}
    return panel > l1 * len(sets) // L1_SETS


def _no_unit_remainder(size: int, tile: int) -> int:
    """``tile``, or the next smaller one whose last, peeled tile of ``size``
    is not one row or column: the batch schedules fold unit dims away, the
    one-column tile becomes a matrix-vector product that cannot be
    specialized back to a matmul, and the whole op ran as scalar loops
    (MobileNetV2's 1x1 convolutions on 7x7 pixels, n = 49, with AVX2's 16-
    and 8-column tiles: 21 ms for a 2x1280x320x49 product). A divisor of
    ``size`` down to a quarter of the tile comes first: no remainder, no masks (n = 49
    in 7-column tiles: 0.93 ms; in masked 15- or 10-column ones, 8.2 or 5.4)."""
    if size <= tile or size % tile != 1:
        return tile
    divisor = next((t for t in range(tile - 1, max(1, tile // 4) - 1, -1) if size % t == 0), None)
    return divisor or next((t for t in range(tile - 1, 1, -1) if size % t != 1), tile)


A_IN_L2 = 512 * 1024        # bytes of A a chunk of columns re-reads from L2 per column tile


def _column_chunks(m: int, n: int, k: int, tn: int, machine: Machine,
                   element_bytes: int) -> tuple[int, int] | None:
    """Thread chunks of whole columns (all rows each) where B is the larger
    operand and all of A (a k block of it) fits in L2, else None. With chunks
    of rows every chunk reads all of B, packing each panel again for a
    chunk's few rows (64 x 1024 x 1024 in 8-row chunks: 93 GFLOP/s; by
    columns 168); the short-k schedule, which fuses the zero fill into each
    register tile, read B once per row tile (an LM head, 256 x 256 x 8000:
    95 GFLOP/s; by columns, packed: 269)."""
    if n <= m or m * k * element_bytes > A_IN_L2:
        return None
    columns = static_tiles((n,), machine.threads, (tn,), m * k)
    return (0, columns[0]) if n % columns[0] == 0 and columns[0] < n else None


def _static_b_blocks(n: int, k: int, chunk_n: int, bn: int, bk: int, tn: int) -> bool:
    """Whether every block of B a chunk packs, and every panel of it, has the
    same static shape: the packing copy (a pad) needs one, and a schedule
    that fails costs a retry of every op one by one (ViT's 4 x 192 x 1000
    head on AVX2, 1000 columns in chunks of 128: 87 s)."""
    return n % tn == 0 and n % chunk_n == 0 and chunk_n % bn == 0 and bn % tn == 0 and k % bk == 0


def _row_block(rows: int, k: int, tm: int, element_bytes: int = 4) -> int:
    """Rows of A per block where a chunk's ``rows`` x ``k`` of A would not stay
    in L2 while the packed panels go by (in whole register tiles), else 0."""
    if rows * k * element_bytes <= A_IN_L2:
        return 0
    return max(tm, A_IN_L2 // (k * element_bytes) // tm * tm)


def _block(extent: int, multiple: int) -> int:
    """A block of at most BLOCK that divides ``extent`` (in ``multiple``s), else BLOCK."""
    if extent <= BLOCK:
        return extent
    found = divisor(extent, BLOCK, multiple)
    return found if found and found >= BLOCK // 4 else BLOCK


def _padded_alone(op: ir.Operation) -> bool:
    """Whether the pooled input is a tensor.pad only this op reads.

    Why: padded whole, the input was copied into a fresh buffer on one thread
    before the pooling (SAME 3x3/2 max pooling of 2x112x112x64: 0.7 ms of
    1.7); padded per thread chunk, each thread copies its rows, in cache.
    """
    pad = op.operands[0].owner
    return hasattr(pad, "name") and pad.name == "tensor.pad" and len(list(pad.results[0].uses)) == 1


DEPTHWISE_ACCUMULATORS_AVX2 = 12     # of AVX2's 16 registers, beside the tap's weights and an input
# AVX-512, 4-vector channel tiles of a depthwise convolution with many taps (convolution_chunks'
# filter banks: 64 or 128 lanes): 8 pixels x 4 zmm beside 4 zmm of weights spilled
LONG_DEPTHWISE_TAPS, DEPTHWISE_ACCUMULATORS_AVX512 = 64, 16


def _pooling_plan(nest: LoopNest, machine: Machine, padded: bool = False,
                  depthwise: bool = False) -> Plan | None:
    """Channels in vectors (_channel_tile: 4, 2 or 1 registers), pixels a divisor
    of ow up to 8: both static, the 1-D vectorizer has no masks. A ``padded``
    input is padded per thread chunk. A depthwise convolution at AVX2 keeps its
    accumulators to DEPTHWISE_ACCUMULATORS_AVX2: 8 pixels x 2 ymm took all 16
    registers and spilled (convolution_chunks.py's 16 channels: 0.6-0.7x the
    time in 4 x 2 tiles, docs/PERFORMANCE.md); at AVX-512 one with many taps
    keeps them to DEPTHWISE_ACCUMULATORS_AVX512 (tiles of 4 zmm: 4 pixels at most)."""
    n, oh, ow, c, kh, kw = nest.extents
    lanes = machine.vector_bytes // 4
    tc = _channel_tile(c, lanes)
    tw = divisor(ow, 8)
    if depthwise and tc and machine.registers < 32:
        tw = divisor(ow, max(1, DEPTHWISE_ACCUMULATORS_AVX2 // -(-tc // lanes)))
    elif depthwise and tc and kh * kw >= LONG_DEPTHWISE_TAPS:
        tw = divisor(ow, min(8, DEPTHWISE_ACCUMULATORS_AVX512 // -(-tc // lanes)))
    if not (tc and tw):
        return None
    chunks = static_tiles((n, oh), machine.threads, (1, 1), ow * c * kh * kw)
    return Plan("xla_pooling_nhwc_padded" if padded else "xla_pooling_nhwc", chunks + (tw, tc))


def _channel_tile(c: int, lanes: int) -> int | None:
    """The channels of a pooling tile: 4, 2 or 1 whole vectors dividing c, else
    half a vector (a ymm at AVX-512), else a divisor of c up to 4 vectors.

    Why no 3 vectors: a tile of 24 channels at AVX2 (144 = 6 x 24) or 48 at
    AVX-512 loaded its window's pixels as single floats put together lane by
    lane (LLVM's code for the <24 x float> and <48 x float> vectors): 8x56x56x144
    depthwise took 10-20 ms against 0.8 for 8x28x28x192 (32 channels, 2 ymm).
    The conv schedule counts such widths unclean too (conv_tails._clean)."""
    for vectors in (4, 2, 1):
        if c % (vectors * lanes) == 0:
            return vectors * lanes
    if lanes >= 16 and c % (lanes // 2) == 0:
        return lanes // 2
    return divisor(c, 4 * lanes)
