"""The AVX512-BF16 micro-kernel of bf16 x bf16 -> f32 contractions: the
AMX kernel's stand-in on CPUs with ``avx512_bf16`` and no AMX (AMD Zen 4;
Intel's Cooper Lake too, not measured).

Without it a large bf16 matmul there runs as the f32 one: both operands
widened to f32 (A whole, B a panel at a time) and the f32 register tile's
FMAs, 16 multiply-adds per instruction. ``vdpbf16ps`` multiplies 16 k-pairs
of bf16 and adds both products to 16 f32 accumulators: 32 multiply-adds per
instruction on half the bytes (docs/PERFORMANCE.md, "AVX512-BF16 matmuls").

``xlac_ukernel_dpbf16_32x32(c, ldc, a, lda, b, ldb, k, rows, accumulate)``:
the AMX kernel's ABI and operand layouts (xlac.targets.cpu.amx_kernels), so
that xla-amx-contractions and xla-amx-calls (its thread loop, A's packing,
the epilogues and hand-offs) serve both: C[rows x 32] (f32) (+)= A[rows x
k] (bf16) . B[k x 32] (bf16), ``rows`` and ``k`` multiples of 32, ``lda`` 0
for A packed in 16 x 32 tiles. B's 32 columns are packed as k-pairs into a
panel on the stack (the AMX kernel's packing: the pair layout ``vdpbf16ps``
reads too), KB rows of k at a time (16 KB: in L1 beside A's rows); each
8-row tile of C is 16 zmm accumulators (two per row), A's k-pair broadcast
from memory (``{1to16}``) into both of its row's products. Between k blocks
the partial sums are C itself (f32 stored and loaded as it is).

Numerics: ``vdpbf16ps`` adds each pair's two products (each exact in f32),
the odd k's first, into the accumulator with round-to-nearest-even, treats
denormal inputs as zero and flushes denormal results (Intel SDM): a summation
order of its own, as the AMX kernel's, within the tolerances of bf16 dots.
"""

from __future__ import annotations

from xlac.targets.cpu import amx_kernels

SYMBOL = "xlac_ukernel_dpbf16_32x32"
FEATURES = ("avx512_bf16",)
KB = 256                           # k rows of B packed at a time: a 16 KB panel
TILE_ROWS = 8                      # C rows a register tile holds: 16 of the 32 zmm
PAIRS_PER_STEP = 16                # k-pairs of one 32-k step, unrolled


def usable(features) -> bool:
    """Whether programs for a CPU of ``features`` take the kernel: it has
    AVX512-BF16 and no AMX. Where there is AMX (Intel's Sapphire Rapids on)
    ``vdpbf16ps`` ran at 0.57x the f32 FMA peak and its register tile at 0.50x
    the f32 micro-kernel (docs/pipeline.md): there AMX's kernel, or (the tile
    state refused) the f32 tiles as before. On Zen 4 it is 2x the f32 tile
    (docs/PERFORMANCE.md)."""
    return all(f in features for f in FEATURES) and not any(f.startswith("amx") for f in features)


def mlir_text() -> str:
    """The kernel as MLIR: func, scf, arith, vector and llvm ops."""
    return function_text(SYMBOL, TILE_ROWS, "dense<0.0> : vector<16xf32>", _tile())


def function_text(symbol: str, tile_rows: int, zero: str, tile: list[str]) -> str:
    """A kernel of this ABI whose B panel holds k-pairs of 2-byte elements
    (bf16, or i16: xlac.targets.cpu.imad_kernels): per k block of KB, B's
    pairs packed, then ``tile`` (``%zero``: ``zero``, the accumulators'
    start) for each ``tile_rows`` rows of C from %r."""
    return "\n".join([
        f"func.func @{symbol}(%c: i64, %ldc: i64, %a: i64, %lda: i64, %b: i64, %ldb: i64, "
        "%k: i64, %rows: i64, %accumulate: i64) {",
        "  %c0 = arith.constant 0 : i64",
        "  %c1 = arith.constant 1 : i64",
        "  %c2 = arith.constant 2 : i64",
        "  %c4 = arith.constant 4 : i64",
        "  %c15 = arith.constant 15 : i64",
        "  %c16 = arith.constant 16 : i64",
        "  %c32 = arith.constant 32 : i64",
        "  %c64 = arith.constant 64 : i64",
        "  %c128 = arith.constant 128 : i64",
        f"  %tile_rows = arith.constant {tile_rows} : i64",
        f"  %kb = arith.constant {KB} : i64",
        "  %not31 = arith.constant -32 : i64",
        f"  %npanel = llvm.mlir.constant({KB * 64} : i64) : i64",
        "  %panel = llvm.alloca %npanel x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr",
        f"  %zero = arith.constant {zero}",
        "  %ldc_bytes = arith.muli %ldc, %c4 : i64",
        "  %ldb_bytes = arith.muli %ldb, %c2 : i64",
        *["  " + line for line in amx_kernels.a_layout()],
        "  %from_c = arith.cmpi ne, %accumulate, %c0 : i64",
        "  scf.for %k0 = %c0 to %k step %kb : i64 {",
        "    %left = arith.subi %k, %k0 : i64",
        "    %kn = arith.minsi %left, %kb : i64",
        "    %pairs = arith.divsi %kn, %c2 : i64",
        *["    " + line for line in amx_kernels.pack_pairs("%c0", "%pairs", "%k0", "%panel", "b")],
        "    %started = arith.cmpi ne, %k0, %c0 : i64",
        "    %read_c = arith.ori %started, %from_c : i1",
        "    scf.for %r = %c0 to %rows step %tile_rows : i64 {",
        *["      " + line for line in tile],
        "    }",
        "  }",
        "  return",
        "}",
    ]) + "\n"


def row_addresses() -> list[str]:
    """``%a_rk``: A's row %r at k0 (its 32-row block, its 16-row half, its
    row in the half: a_layout), and ``%c_r``: C's row %r."""
    return ["%blk = arith.andi %r, %not31 : i64",
            "%blk_bytes = arith.muli %blk, %a_row : i64",
            "%in_half = arith.andi %r, %c16 : i64",
            "%second = arith.cmpi ne, %in_half, %c0 : i64",
            "%half_bytes = arith.select %second, %a_half, %c0 : i64",
            "%in_rows = arith.andi %r, %c15 : i64",
            "%row_bytes = arith.muli %in_rows, %a_stride : i64",
            "%a_r0 = arith.addi %a, %blk_bytes : i64",
            "%a_r1 = arith.addi %a_r0, %half_bytes : i64",
            "%a_r = arith.addi %a_r1, %row_bytes : i64",
            "%k0_bytes = arith.muli %k0, %a_k : i64",
            "%a_rk = arith.addi %a_r, %k0_bytes : i64",
            "%c_off = arith.muli %r, %ldc_bytes : i64",
            "%c_r = arith.addi %c, %c_off : i64"]


def k_steps(count: int, carried: str, types: str) -> list[str]:
    """The loop over a k block's 32-k steps carrying ``count`` accumulators
    (``carried``: their starts, ``types``), opened: ``%b_at``, the step's
    pairs in the panel, and ``%kk_bytes``, its offset in A's rows."""
    return [f"%sum:{count} = scf.for %kk = %c0 to %kn step %c32 iter_args({carried}) -> ({types}) : i64 {{",
            "  %kk_bytes = arith.muli %kk, %a_k : i64",
            "  %pair0 = arith.divsi %kk, %c2 : i64",
            "  %b_off = arith.muli %pair0, %c128 : i64",
            "  %b_at = llvm.getelementptr %panel[%b_off] : (!llvm.ptr, i64) -> !llvm.ptr, i8"]


def _tile() -> list[str]:
    """C[r : r + 8, 0 : 32] (+)= A[r : r + 8, k0 : k0 + kn] . panel."""
    rows = range(TILE_ROWS)
    accs = [(i, h) for i in rows for h in range(2)]
    lines = row_addresses()
    for i in rows:
        lines += [f"%ci{i} = arith.constant {i} : i64",
                  f"%co{i} = arith.muli %ci{i}, %ldc_bytes : i64",
                  f"%cq{i} = arith.addi %c_r, %co{i} : i64",
                  f"%cp{i}_0 = llvm.inttoptr %cq{i} : i64 to !llvm.ptr",
                  f"%cp{i}_1 = llvm.getelementptr %cp{i}_0[64] : (!llvm.ptr) -> !llvm.ptr, i8",
                  f"%ao{i} = arith.muli %ci{i}, %a_stride : i64",
                  f"%aq{i} = arith.addi %a_rk, %ao{i} : i64"]
    for i, h in accs:
        lines += [f"%init{i}_{h} = scf.if %read_c -> (vector<16xf32>) {{",
                  f"  %v = llvm.load %cp{i}_{h} {{alignment = 4 : i64}} : !llvm.ptr -> vector<16xf32>",
                  "  scf.yield %v : vector<16xf32>",
                  "} else {",
                  "  scf.yield %zero : vector<16xf32>",
                  "}"]
    types = ", ".join(["vector<16xf32>"] * len(accs))
    carried = ", ".join(f"%acc{i}_{h} = %init{i}_{h}" for i, h in accs)
    lines += k_steps(len(accs), carried, types)
    current = {(i, h): f"%acc{i}_{h}" for i, h in accs}
    for i in rows:
        lines += [f"  %as{i} = arith.addi %aq{i}, %kk_bytes : i64",
                  f"  %ap{i} = llvm.inttoptr %as{i} : i64 to !llvm.ptr"]
    for p in range(PAIRS_PER_STEP):
        lines += [f"  %bp{p}_0 = llvm.getelementptr %b_at[{128 * p}] : (!llvm.ptr) -> !llvm.ptr, i8",
                  f"  %bp{p}_1 = llvm.getelementptr %b_at[{128 * p + 64}] : (!llvm.ptr) -> !llvm.ptr, i8",
                  f"  %b{p}_0 = llvm.load %bp{p}_0 {{alignment = 64 : i64}} : !llvm.ptr -> vector<32xbf16>",
                  f"  %b{p}_1 = llvm.load %bp{p}_1 {{alignment = 64 : i64}} : !llvm.ptr -> vector<32xbf16>"]
        for i in rows:
            tag = f"{i}_{p}"
            lines += [f"  %ae{tag} = llvm.getelementptr %ap{i}[{4 * p}] : (!llvm.ptr) -> !llvm.ptr, i8",
                      f"  %aw{tag} = llvm.load %ae{tag} {{alignment = 2 : i64}} : !llvm.ptr -> i32",
                      f"  %ab{tag} = vector.broadcast %aw{tag} : i32 to vector<16xi32>",
                      f"  %av{tag} = llvm.bitcast %ab{tag} : vector<16xi32> to vector<32xbf16>"]
            for h in range(2):
                out = f"%d{i}_{h}_{p}"
                lines.append(f'  {out} = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"'
                             f"({current[(i, h)]}, %b{p}_{h}, %av{tag}) : (vector<16xf32>, vector<32xbf16>, "
                             "vector<32xbf16>) -> vector<16xf32>")
                current[(i, h)] = out
    lines += [f"  scf.yield {', '.join(current[(i, h)] for i, h in accs)} : {types}", "}"]
    lines += [f"llvm.store %sum#{n}, %cp{i}_{h} {{alignment = 4 : i64}} : vector<16xf32>, !llvm.ptr"
              for n, (i, h) in enumerate(accs)]
    return lines
