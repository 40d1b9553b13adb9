"""A's packing inside an AMX matmul's thread loop (xla-amx-calls).

The kernel's A tiles are 16 rows of 64 bytes. Read from A itself they are 16
rows a row stride apart (2 KB for k = 1024): 32 strided lines a k-step from
L2, every 32-column chunk again. Packed, each 32-row block's k-step is its
two tiles in 2 KB one after the other (the layout the kernel reads when its
lda is 0, xlac.targets.cpu.amx_kernels): the chunks then stream A
contiguously (about 10% faster per call at 256 x 1024 x 1024,
docs/PERFORMANCE.md).

No thread loop of its own (its start and join under load cost what it
saved): the thread loop's iterations are (row block, group of column
chunks), and each packs its row block into a buffer of its own and then
runs its chunks on it. The copy (8.5 us for 128 x 1024) is made once per
group, so it pays only where a group has ``MIN_PANELS`` chunks or more (the
chunks' saving, about 2.4 us each at k = 1024). ``per_group`` picks the
fewest groups that still give each thread ``PER_THREAD`` iterations.
"""

from __future__ import annotations

ROWS = 256              # C's rows per call (xla-amx-calls): a chunk's A (256 x k bf16) stays in L2
MIN_PANELS = 8          # a group's chunks at least: its packed A read 8 times or more
PER_THREAD = 1          # iterations per thread: each group packs its rows again (2: slower, PERFORMANCE.md)


def per_group(chunks: int, others: int, threads: int) -> int:
    """Column chunks per group: ``chunks`` (n / 32) split into the fewest
    groups that, with ``others`` (batch x row blocks) iterations each, give
    ``threads`` threads PER_THREAD iterations each (at least one chunk a group)."""
    wanted = -(-PER_THREAD * threads // others)
    return max(1, chunks // max(1, min(wanted, chunks)))


def packs(per_group: int) -> bool:
    """Whether a group of ``per_group`` chunks packs its A first."""
    return per_group >= MIN_PANELS


def buffer_type(rows: int, k: int, element: str = "bf16") -> str:
    """A's packed rows: 2-byte elements, bf16 (or i16 for the integer kernels)."""
    return f"memref<{rows * k}x{element}>"


def in_iteration(name: str, batch: int, rows: int, k: int, a_type: str, element: str = "bf16") -> list[str]:
    """In a thread loop iteration's function, before its chunks: ``%ap``
    (allocated, the caller frees it after its chunks) holding the
    iteration's %nrows rows of A from %row (of batch %bi) packed, and
    ``%apptr``, its address."""
    lead = ("%bi, ", ", index") if batch else ("", "")
    buffer = buffer_type(rows, k, element)
    return [f"  %ap = memref.alloc() {{alignment = 64 : i64}} : {buffer}",
            f"  func.call @{name}(%a, %ap, {lead[0]}%row, %nrows) {{no_inline}} : "
            f"({a_type}, {buffer}{lead[1]}, index, index) -> ()",
            f"  %apptr = memref.extract_aligned_pointer_as_index %ap : {buffer} -> index"]


def function_text(name: str, batch: int, rows: int, k: int, a_type: str, element: str = "bf16") -> str:
    """``@name(a, ap, [bi,] row, nrows)``: A's rows row .. row + nrows - 1 (of
    batch bi; nrows a multiple of 32) into ``ap`` packed: block b's k-step s,
    row r at element 32 b k + 32 s + 32 r, one 32-element vector each. A
    function of its own, called `no_inline`, as the epilogue's (amx_calls)."""
    lead = ("%bi, ", ", %bi: index") if batch else ("", "")
    buffer = buffer_type(rows, k, element)
    return "\n".join([
        f"func.func private @{name}(%a: {a_type}, %ap: {buffer}{lead[1]}, %row: index, %nrows: index) {{",
        "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
        "  %c32 = arith.constant 32 : index", f"  %k = arith.constant {k} : index",
        "  scf.for %b = %c0 to %nrows step %c32 {",
        "    %start = arith.muli %b, %k : index",
        "    %brow = arith.addi %row, %b : index",
        "    scf.for %s = %c0 to %k step %c32 {",
        "      %step = arith.muli %s, %c32 : index",
        "      %at = arith.addi %start, %step : index",
        "      scf.for %r = %c0 to %c32 step %c1 {",
        "        %ar = arith.addi %brow, %r : index",
        f"        %v = vector.load %a[{lead[0]}%ar, %s] : {a_type}, vector<32x{element}>",
        "        %rr = arith.muli %r, %c32 : index",
        "        %to = arith.addi %at, %rr : index",
        f"        vector.store %v, %ap[%to] : {buffer}, vector<32x{element}>",
        "      }",
        "    }",
        "  }",
        "  return",
        "}"]) + "\n"


def chunk_address() -> list[str]:
    """``%aat_i``: the iteration's packed A, and ``%ald_i`` 0, the kernel's
    sign for packed A."""
    return ["    %aat_i = arith.index_cast %apptr : index to i64",
            "    %ald_i = arith.constant 0 : i64"]
