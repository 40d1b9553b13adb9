"""How a scheduled op's loops are split among threads: chunk (forall tile)
sizes, and divisors for tiles that need no masks. Read by the plans
(schedule_plan, contraction_plan, parallel_loops_plan)."""

from __future__ import annotations

import math

CHUNK_WORK = 1 << 16         # iterations per thread at least, or fork-join costs more (docs/cpu-runtime.md)
CHUNKS_PER_THREAD = 4
# A kernel that mostly writes (no math calls in its body, its inputs at most
# a quarter of the bytes it writes: a broadcast, an iota, a fill) and moves at
# most this many bytes runs on the calling thread: one core writes 2 MiB in
# 0.03-0.05 ms, and splitting it cost more than it saved (docs/PERFORMANCE.md,
# "Small write-mostly kernels"). Kernels that read as much as they write (an
# add, a relu of a tensor) were measured on an idle Zen 4 to gain from the
# second core even at 0.5-2 MiB (MobileNet 1.05-1.08x slower on one), so they
# stay split. Bytes, not iterations: a 64-lane u8 store does what 64 scalar
# iterations would.
# 12 MiB, between the measured 8 (one thread 1.3-1.8x faster) and 16 (split 2x faster
# idle): at 8 MiB a kernel that also read its 8-16 KiB input (a c128 broadcast of a
# 512-vector to 512 x 1024, 8 MiB + 8 KiB) was split, and ran 1.3-1.7x one thread's time
STREAMING_SERIAL_BYTES = 12 << 20
WRITE_MOSTLY_RATIO = 4       # written bytes at least this many times those read


def streams_alone(read_bytes: int, written_bytes: int, math_heavy: bool) -> bool:
    """Whether a kernel that reads ``read_bytes`` and writes ``written_bytes``,
    with math calls in its body or not, is better left to one thread whatever
    the CPU."""
    return (not math_heavy and read_bytes + written_bytes <= STREAMING_SERIAL_BYTES
            and read_bytes * WRITE_MOSTLY_RATIO <= written_bytes)


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def thread_tiles(extents: tuple[int, ...], threads: int, align: tuple[int, ...] | int = 1,
                 inner_work: int = 1) -> tuple[int, ...]:
    """Forall tile sizes splitting the outermost dims among ``threads``.

    0 leaves a dim whole. ``align`` (per dim, or for the innermost dim only
    when an int) keeps chunk edges on register-tile edges, so only the last
    chunk can have partial tiles. One part: the whole nest is the chunk (a
    one-trip scf.forall, folded away later).
    """
    if isinstance(align, int):
        align = (1,) * (len(extents) - 1) + (align,)
    total = math.prod(extents) * inner_work      # inner_work: iterations per point
    if total // CHUNK_WORK < 2 or threads == 1:
        return tuple(extents)
    # a few chunks per thread: dynamic scheduling balances them when a core is busy
    parts = max(2, min(threads * CHUNKS_PER_THREAD, total // CHUNK_WORK))
    sizes = [0] * len(extents)
    for dim, extent in enumerate(extents):
        if extent >= parts * align[dim] or dim == len(extents) - 1:
            sizes[dim] = _round_up(-(-extent // parts), align[dim])
            return tuple(sizes)
        sizes[dim] = 1                           # every index of a short outer dim is a chunk
        parts = -(-parts // extent)
    return tuple(sizes)


def static_tiles(extents: tuple[int, ...], threads: int, align: tuple[int, ...],
                 inner_work: int = 1, per_thread: int = CHUNKS_PER_THREAD,
                 spread: int = 2) -> tuple[int, ...]:
    """Like ``thread_tiles``, but each chunk divides its extent where it can, in
    whole ``align`` tiles: every chunk then has the same static shape, and the
    register tiles inside need no masks. About ``per_thread`` chunks a thread,
    at most ``spread`` times as many where no nearer count divides."""
    total = math.prod(extents) * inner_work
    if total // CHUNK_WORK < 2 or threads == 1:
        return tuple(extents)
    parts = max(2, min(threads * per_thread, total // CHUNK_WORK))
    sizes = [0] * len(extents)
    for dim, extent in enumerate(extents):
        last = dim == len(extents) - 1
        tiles = extent // align[dim] if extent % align[dim] == 0 else 0
        if tiles >= 2:
            counts = [d for d in range(1, tiles + 1) if tiles % d == 0]
            count = min((d for d in counts if d >= parts), default=counts[-1])
            if count > spread * parts and not last:
                continue                         # no divisor near (197 tiles): split a later dim
            if count > spread * parts:
                # nothing divides: even chunks of whole tiles, the last one short (masked)
                sizes[dim] = _round_up(-(-extent // parts), align[dim])
                return tuple(sizes)
            sizes[dim] = extent // count
            if count >= parts or last:
                return tuple(sizes)
            parts = -(-parts // count)
        elif extent >= 2 and align[dim] == 1:
            sizes[dim] = 1                       # every index of a short outer dim is a chunk
            parts = -(-parts // extent)
        elif last:
            sizes[dim] = extent
    return tuple(sizes)


def block_tiles(extents: tuple[int, ...], threads: int, align: tuple[int, ...]) -> tuple[int, ...]:
    """Chunks of whole register blocks (``align``, each extent a multiple of
    its own) that divide their extents, as static_tiles, so that the blocks
    need no masks; thread_tiles' where none do. A transpose of 1440 x 192 f32
    in chunks of 368 rows (the last 336) masked every block: 94 us, against
    46 in chunks of 288 (fft 180x720 0.41 -> 0.36 ms, host)."""
    sizes = static_tiles(extents, threads, align, spread=4)
    if all(size == 0 or extent % size == 0 for size, extent in zip(sizes, extents)):
        return sizes
    return thread_tiles(extents, threads, align)


#: Rows this many bytes apart (or a multiple) fall in the same L1 set; half
#: of it apart, 16 rows fill the 8 ways of two sets.
ALIASED_ROW_BYTES = 4096


def blocked_sequence(rank: int, whole: bool, row_bytes: tuple[int, int]) -> str:
    """The schedule of a register-blocked transpose whose input and output
    rows are ``row_bytes`` long: 2-D whole blocks whose input rows are a
    multiple of 4 KiB and whose output rows are not of 2 KiB sweep the input's
    rows (transpose.mlir's xla_transpose_rows_2d: 256 x 1024 f32 0.105 ->
    0.087 ms, 128 x 4096 0.11-0.20 -> 0.09-0.13; with both aliased, 1024 x
    1024 and 512 x 1024, it ran slower), else blocks or peeled blocks."""
    read, written = row_bytes
    if whole and rank == 2 and read % ALIASED_ROW_BYTES == 0 and written % (ALIASED_ROW_BYTES // 2):
        return "xla_transpose_rows_2d"
    return f"xla_transpose_{'blocks' if whole else 'peeled'}_{rank}d"


def divisor(extent: int, cap: int, multiple: int = 1) -> int | None:
    """The largest divisor of ``extent`` that is at most ``cap`` and a multiple of ``multiple``."""
    found = [d for d in range(multiple, min(extent, cap) + 1, multiple) if extent % d == 0]
    return found[-1] if found else None


#: A body of more ops than xla-fuse's cap counts as this many per point of work.
LONG_BODY_OPS = 64
BODY_OPS_PER_POINT = 16


def body_work(op) -> int:
    """Points of elementwise work one iteration of ``op`` does: 1, or for a
    body longer than any fusion's (xla-lower-fft's butterfly stages: a
    16-point codelet is ~300 ops writing 32 results) its ops / 16, so that
    such a kernel is split among the threads like one of as much work."""
    ops = sum(1 for _ in op.regions[0].blocks[0].operations)
    return ops // BODY_OPS_PER_POINT if ops > LONG_BODY_OPS else 1
