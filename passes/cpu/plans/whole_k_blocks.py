"""B's whole-k blocks: when a contraction's k runs as one block of packed B
(in L2) instead of BLOCK-deep panels, how wide that block is, and the thread
chunks that pack each block once (contraction_plan chooses with these)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.cpu.plans.chunks import static_tiles
from xlac.passes.cpu.plans.schedule_plan import Machine
from xlac.passes.cpu.plans.widened_a import is_widening

BLOCK = 256                  # n and k blocks at most (k: see whole_k_block); 256 x 256 f32 of B: 256 KiB, in L2


WHOLE_K = 1024               # packed blocks: k up to this runs as one block, B's block narrower
MIN_WHOLE_K_TILES = 4        # ... of at least this many column tiles, each row tile's A read from L2 once for them
MIN_WHOLE_K_ROW_TILES = 32   # AVX-512: ... and a chunk of at least this many row tiles reading each block
MIN_WHOLE_K_ROW_TILES_SMALL_L1 = 16   # ... where L1 cannot hold a panel beside a row tile's A


def min_whole_k_row_tiles(machine: Machine, tm: int, tn: int, element_bytes: int) -> int:
    """Row tiles an AVX-512 chunk needs to take the whole-k block rather than
    the BLOCK-deep panels. The panels win on few rows by staying in L1 while
    the row tiles go by (measured on 48 KiB of L1: a 32 KiB panel and a row
    tile's 8 KiB of A); an L1 too small for both (Zen 4's 32 KiB) reads the
    panels from L2 anyway, and there the whole-k block wins from 16 row tiles
    (one core of a Zen 4, 128 x 768 x 3072: 81 -> 88 GFLOP/s; 128 x 768 x 768:
    78 -> 89; docs/PERFORMANCE.md). An L1 not known keeps the 48 KiB bound."""
    return MIN_WHOLE_K_ROW_TILES if l1_holds_a_panel(machine, tm, tn, element_bytes) \
        else MIN_WHOLE_K_ROW_TILES_SMALL_L1


def l1_holds_a_panel(machine: Machine, tm: int, tn: int, element_bytes: int = 4) -> bool:
    """Whether L1 holds a BLOCK-deep tn-wide panel of B beside a row tile's A
    over it (assumed where the L1 is not known)."""
    return not machine.l1d_bytes or (BLOCK * tn + tm * BLOCK) * element_bytes <= machine.l1d_bytes


def whole_k_block_bytes(machine: Machine) -> int:
    """Bytes of B's whole-k block: half of L2 on the smallest L2 of the CPUs
    of its vector width, the rest left to A's and C's lines going by. AVX2
    and SSE: 256 KiB (AMD Zen 2 and 3: 512 KiB of L2 a core); AVX-512: 512 KiB
    (Zen 4: 1 MiB; Intel's Skylake-SP to Emerald Rapids: 1-2 MiB)."""
    return (2 if machine.vector_bytes >= 64 else 1) * BLOCK * BLOCK * 4


def whole_k_block(k: int, chunk_n: int, bn: int, bk: int, tn: int, element_bytes: int,
                   machine: Machine) -> tuple[int, int]:
    """(bn, bk) for whole packed blocks: all of a k up to WHOLE_K in one
    block, as many columns as keep the block within whole_k_block_bytes (in
    L2), in whole tiles dividing the chunk; else (bn, bk).
    Every k block is a pass over the chunk's C, each register tile's rows
    read and written back: at 1024^3, C's 4 MiB from L3 four times over
    (AVX2, bn = bk = 256: 76 GFLOP/s on one core, 75% of its peak; bn = 64,
    bk = 1024: 84; docs/PERFORMANCE.md). Fewer columns cost more than that
    saves: a row tile's rows of A, all of k, are read again from L2 every
    few column tiles (1008^3 in blocks 48 wide: 80 -> 76), so k beyond
    WHOLE_K, or a chunk without MIN_WHOLE_K_TILES tiles to a block, keeps
    the 256 blocks; on the 16-register levels a chunk narrower than that
    is one whole-k block (whole_chunk_block). The FMAs run in the same k
    order either way: same results."""
    if element_bytes != 4 or not BLOCK < k <= WHOLE_K:
        return bn, bk
    fits = [b for b in range(tn, chunk_n + 1, tn)
            if chunk_n % b == 0 and b * k * element_bytes <= whole_k_block_bytes(machine)
            and (b >= MIN_WHOLE_K_TILES * tn or whole_chunk_block(b, chunk_n, machine))]
    return (max(fits), k) if fits else (bn, bk)


def whole_chunk_block(bn: int, chunk_n: int, machine: Machine) -> bool:
    """Whether a whole-k block of bn columns, fewer than MIN_WHOLE_K_TILES
    tiles, is taken all the same: on the 16-register levels (AVX2, SSE)
    where it is the thread chunk's every column (BERT's MLP down, 512 x 1024
    x 256, in chunks of 32 columns; ViT's, 788 x 768 x 192, of 16). Each row
    tile's rows of A are then read once per chunk, as with the 256-deep
    blocks, and the k blocks' passes over C (read back, added to, written)
    are gone: at x86-64-v3 on a Zen 4, two threads, 0.956 and 0.951 of the
    time (docs/PERFORMANCE.md). AVX-512 keeps its plans (not measured there)."""
    return machine.registers < 32 and bn == chunk_n


def whole_block_chunks(m: int, n: int, k: int, chunks: tuple[int, ...], tm: int, tn: int,
                        element_bytes: int, machine: Machine) -> tuple[int, int] | None:
    """Thread chunks of whole columns of B's whole-k blocks (and of rows only
    where there are too few blocks for the threads), in place of ``chunks``
    of rows, or None. Each chunk of rows packs every block of B again: 1024^3
    on two threads (AVX-512) in eight 128-row chunks packed its 4 MiB of B
    eight times, once per chunk, where one core packs it once. A chunk of
    columns packs only its own blocks, and A's rows are read once per block
    as before: the same traffic as one core's, on any CPU. The FMAs run in
    the same k order from 0: the same results."""
    if len(chunks) != 2 or not chunks[0] or chunks[1]:
        return None                              # not chunks of rows
    bn, bk = whole_k_block(k, n, 0, 0, tn, element_bytes, machine)
    if bk != k or n == bn:
        return None                              # no whole-k block, or one: nothing packed twice
    # columns first, in whole blocks; rows too where the blocks are fewer than the chunks wanted
    cn, cm = static_tiles((n, m), machine.threads, (bn, tm), k)
    if not cn or cn == n or n % cn or (cm and m % cm):
        return None
    return cm if cm < m else 0, cn


ALL_ROWS_BLOCK_BYTES = BLOCK * BLOCK * 4   # B's whole-k block a chunk of all rows packs: 256 KiB
MIN_CHUNKS_PER_THREAD = 2                   # ... in at least this many chunks a thread (a busy core's share moves)


def all_rows_column_chunks(m: int, n: int, k: int, tm: int, tn: int, element_bytes: int,
                           machine: Machine) -> int | None:
    """The width of thread chunks of all rows and whole columns, each one
    whole-k block of B packed once, for an AVX-512 matmul whose chunks of
    rows are too short for the whole-k block; else None. Such row chunks
    (512^3 on two threads: eight of 64 rows) each pack every BLOCK-deep panel
    of B again, all of B once per chunk (f32: 1 MiB eight times a call). With
    all of m in each chunk, every chunk has the row tiles the whole-k block
    needs (``min_rows``, the rule of min_whole_k_row_tiles) and packs only its
    columns, once: the traffic of one core's plan, as whole_block_chunks
    gives longer row chunks. The block is at most ALL_ROWS_BLOCK_BYTES (f32
    512^3: 128 columns, four chunks; f64: 64), at least MIN_WHOLE_K_TILES
    tiles wide, and there are at least MIN_CHUNKS_PER_THREAD chunks a thread.
    Each element is still summed over all of k from 0: the same results."""
    min_rows = min_whole_k_row_tiles(machine, tm, tn, element_bytes) * tm
    if machine.registers < 32 or not BLOCK < k <= WHOLE_K or m < min_rows or m % tm or n % tn:
        return None
    widths = [b for b in range(MIN_WHOLE_K_TILES * tn, n // (MIN_CHUNKS_PER_THREAD * machine.threads) + 1, tn)
              if n % b == 0 and b * k * element_bytes <= ALL_ROWS_BLOCK_BYTES]
    return max(widths) if widths else None


def whole_k_widened_b_avx2(k: int, chunk_n: int, bn: int, bk: int, tn: int, producer: ir.Operation,
                            machine: Machine) -> tuple[int, int] | None:
    """(bn, k) where AVX2's matmul with B made by a widening (bf16, f16 or
    f8 weights summed in f32, i8 in i32) widens all of a k up to WHOLE_K into
    one block of a chunk's columns, as the f32 plan packs its whole-k block
    (whole_k_block), its row tiles then running over all of k at once; else
    None. Before, such B was widened into BLOCK-deep blocks or panels
    (@xla_matmul_fused_b; @xla_matmul_block_packed_fused_b past 512 rows),
    each k block a pass over the chunk's C (read back, added to, written).
    Zen 4 at x86-64-v3, CPU time new/old: the sweep's bf16 512^3 0.93 on one
    thread, 0.99 on two; f16 512^3 0.96; mlp_bf16_f32acc, 1024^3 bf16 and
    i8 0.98-0.99 (docs/PERFORMANCE.md). The sums run over k in order from 0
    either way: the same bits. AVX-512 keeps its plans (its fused panels
    take A's widening too: plans/widened_a.py)."""
    if machine.vector_bytes != 32 or not is_widening(producer):
        return None
    whole_bn, whole_bk = whole_k_block(k, chunk_n, bn, bk, tn, 4, machine)
    return (whole_bn, whole_bk) if whole_bk == k > BLOCK else None
