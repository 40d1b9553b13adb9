"""A's packing before an AMX matmul's thread loop (xla-amx-calls).

The kernel's A tiles are 16 rows of 64 bytes. Read from A itself they are 16
rows a row stride apart (2 KB for k = 1024): 32 strided lines a k-step from
L2, every 32-column chunk again. Packed once per matmul, each 32-row block's
k-step is its two tiles in 2 KB one after the other (the layout the kernel
reads when its lda is 0, xlac.targets.cpu.amx_kernels): the chunks then
stream A contiguously (about 10% faster per call at 256 x 1024 x 1024,
docs/PERFORMANCE.md). The copy reads A once and writes it once, so it pays
only where several column chunks reuse A: ``MIN_PANELS``, where the chunks'
saving (about 2.4 us each at k = 1024) covers the copy (8.5 us for a thread's
half of 256 x 1024) and one more thread loop's start.
"""

from __future__ import annotations

MIN_PANELS = 8          # n / 32 at least: A read by 8 chunks or more


def packs(n: int) -> bool:
    """Whether a matmul of n columns packs its A first."""
    return n // 32 >= MIN_PANELS


def buffer_type(batch: int, m: int, k: int) -> str:
    return f"memref<{max(batch, 1) * m * k}xbf16>"


def thread_loop(name: str, batch: int, m: int, k: int, a_type: str) -> list[str]:
    """``%ap`` (allocated) filled by a thread loop over 32-row blocks, and
    ``%apptr``, its address; the caller frees it after its own loop."""
    rank3 = batch > 0
    ivs, counts = (["%bi", "%i"], [str(batch), str(m // 32)]) if rank3 else (["%i"], [str(m // 32)])
    lead = ("%bi, ", ", index") if rank3 else ("", "")
    buffer = buffer_type(batch, m, k)
    return [f"  %ap = memref.alloc() {{alignment = 64 : i64}} : {buffer}",
            f"  scf.forall ({', '.join(ivs)}) in ({', '.join(counts)}) {{",
            "    %prow = arith.muli %i, %c32 : index",
            f"    func.call @{name}(%a, %ap, {lead[0]}%prow) {{no_inline}} : "
            f"({a_type}, {buffer}{lead[1]}, index) -> ()",
            "  }",
            f"  %apptr = memref.extract_aligned_pointer_as_index %ap : {buffer} -> index"]


def function_text(name: str, batch: int, m: int, k: int, a_type: str) -> str:
    """``@name(a, ap, [bi,] row)``: A's rows row .. row + 31 (of batch bi)
    into ``ap`` packed: k-step s, row r of the block at element
    (bi m + row) k + 32 s + 32 r, one 32-element vector each. A function of
    its own, called `no_inline`, as the epilogue's (amx_calls)."""
    rank3 = batch > 0
    lead = ("%bi, ", ", %bi: index") if rank3 else ("", "")
    base = ["  %bm = arith.muli %bi, %m : index", "  %brow = arith.addi %bm, %row : index"] if rank3 else []
    buffer = buffer_type(batch, m, k)
    return "\n".join([
        f"func.func private @{name}(%a: {a_type}, %ap: {buffer}{lead[1]}, %row: index) {{",
        "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
        "  %c32 = arith.constant 32 : index", f"  %m = arith.constant {m} : index",
        f"  %k = arith.constant {k} : index",
        *base,
        f"  %start = arith.muli {'%brow' if rank3 else '%row'}, %k : index",
        "  scf.for %s = %c0 to %k step %c32 {",
        "    %step = arith.muli %s, %c32 : index",
        "    %at = arith.addi %start, %step : index",
        "    scf.for %r = %c0 to %c32 step %c1 {",
        "      %ar = arith.addi %row, %r : index",
        f"      %v = vector.load %a[{lead[0]}%ar, %s] : {a_type}, vector<32xbf16>",
        "      %rr = arith.muli %r, %c32 : index",
        "      %to = arith.addi %at, %rr : index",
        f"      vector.store %v, %ap[%to] : {buffer}, vector<32xbf16>",
        "    }",
        "  }",
        "  return",
        "}"]) + "\n"


def chunk_address(batch: int) -> list[str]:
    """In the thread loop: ``%aat_i``, the packed A of the chunk at %row (of
    batch %bi), and ``%ald_i`` 0, the kernel's sign for packed A."""
    lead = ["    %pbm = arith.muli %bi, %m : index", "    %prow = arith.addi %pbm, %row : index"] if batch \
        else []
    return [*lead,
            f"    %pel = arith.muli {'%prow' if batch else '%row'}, %kx : index",
            "    %pby = arith.muli %pel, %c2 : index",
            "    %aat = arith.addi %apptr, %pby : index",
            "    %aat_i = arith.index_cast %aat : index to i64",
            "    %ald_i = arith.constant 0 : i64"]
