"""The integer micro-kernels of 8-bit integer matmuls (i16 x i16 -> i32) on
CPUs without a bf16 kernel (AVX2: x86-64-v3; AVX-512 without AVX512-BF16:
x86-64-v4, Intel's Skylake to Ice Lake): ``vpmaddwd`` multiplies 16 (zmm: 32)
i16 pairs and adds each pair's two products into an i32, ``vpaddd`` adds
those into the accumulators; ``vpdpwssd`` (AVX512-VNNI, AVX-VNNI) does both.

Without them an i8 dot at those levels ran as f32 dots on sitofp-widened
operands (exact in chunks of k, xla-widen-contractions) on the f32 register
tiles: 8 multiply-adds an FMA (docs/PERFORMANCE.md, "8-bit integer matmuls").

``xlac_ukernel_imad_<variant>_32x32(c, ldc, a, lda, b, ldb, k, rows, accumulate)``:
the bf16 kernels' ABI and operand layouts (xlac.targets.cpu.amx_kernels,
dpbf16_kernels), i16 in place of bf16 and i32 in place of f32 (the same
bytes), so that xla-amx-contractions and xla-amx-calls (thread loop, A's
packing, epilogues) serve them too: C[rows x 32] (+)= A[rows x k] . B[k x 32],
``rows`` and ``k`` multiples of 32, ``lda`` 0 for A packed in 16 x 32 tiles.
B's k-pairs packed into a panel on the stack (amx_kernels.pack_pairs, the
pairs ``vpmaddwd`` reads), dpbf16_kernels.KB rows of k at a time; each tile of C's rows is
``TILE[variant]`` accumulators, A's k-pair broadcast into its row's products.

Numerics: i8/ui8 operands widened to i16: every pair's sum fits an i32 (at
most 2 x 255 x 128), ``vpmaddwd`` never saturates (only -32768^2 twice
would); i32 adds wrap. The result is the exact sum mod 2^32 in any order:
XLA's and the reference's, bit for bit, at every k (no chunks needed).
"""

from __future__ import annotations

from xlac.targets.cpu import dpbf16_kernels

PAIRS_PER_STEP = 16                # k-pairs of one 32-k step, unrolled
# variant: (i32 lanes a vector, tile rows, vectors a row (32 columns), intrinsic).
# Tiles measured on Zen 4 (docs/PERFORMANCE.md): ymm 2 x 4 as fast as 4 x 2 x 2 passes
VARIANTS = {
    "pmaddwd256": (8, 2, 4, "llvm.x86.avx2.pmadd.wd"),
    "vpdpwssd256": (8, 2, 4, "llvm.x86.avx512.vpdpwssd.256"),
    "pmaddwd512": (16, 8, 2, "llvm.x86.avx512.pmaddw.d.512"),
    "vpdpwssd512": (16, 8, 2, "llvm.x86.avx512.vpdpwssd.512"),
}


def symbol(variant: str) -> str:
    return f"xlac_ukernel_imad_{variant}_32x32"


def variant_for(features) -> str | None:
    """The kernel a CPU of ``features`` takes, by its ISA features alone: zmm
    where it has AVX512-BW, ``vpdpwssd`` where it has VNNI, else AVX2's
    ``vpmaddwd``; None without AVX2 (/proc/cpuinfo's spellings)."""
    if "avx512bw" in features:
        return "vpdpwssd512" if "avx512_vnni" in features else "pmaddwd512"
    if "avx2" in features:
        return "vpdpwssd256" if "avx_vnni" in features else "pmaddwd256"
    return None


def makers() -> dict:
    """Each variant's symbol with its MLIR text's maker (xlac.targets.cpu.micro_kernels)."""
    return {symbol(v): (lambda v=v: mlir_text(v)) for v in VARIANTS}


def mlir_text(variant: str) -> str:
    """The kernel as MLIR: func, scf, arith, vector and llvm ops (the dpbf16
    kernel's k blocks and B panel, this tile)."""
    lanes, tile_rows, _, _ = VARIANTS[variant]
    return dpbf16_kernels.function_text(symbol(variant), tile_rows, f"dense<0> : vector<{lanes}xi32>",
                                        _tile(variant))


def _row_addresses(tile_rows: int) -> list[str]:
    """A's and C's addresses of the tile's rows from %r."""
    lines = dpbf16_kernels.row_addresses()
    for i in range(tile_rows):
        lines += [f"%ci{i} = arith.constant {i} : i64", f"%co{i} = arith.muli %ci{i}, %ldc_bytes : i64",
                  f"%cq{i} = arith.addi %c_r, %co{i} : i64", f"%cb{i} = llvm.inttoptr %cq{i} : i64 to !llvm.ptr",
                  f"%ao{i} = arith.muli %ci{i}, %a_stride : i64", f"%aq{i} = arith.addi %a_rk, %ao{i} : i64"]
    return lines


def _tile(variant: str) -> list[str]:
    """C[r : r + tile_rows, 0 : 32] (+)= A[r : r + tile_rows, k0 : k0 + kn] . panel."""
    lanes, tile_rows, vectors, intrinsic = VARIANTS[variant]
    vec, pairs = f"vector<{lanes}xi32>", f"vector<{2 * lanes}xi16>"
    vbytes = 4 * lanes
    accs = [(i, h) for i in range(tile_rows) for h in range(vectors)]
    lines = _row_addresses(tile_rows)
    for i, h in accs:
        lines += [f"%cp{i}_{h} = llvm.getelementptr %cb{i}[{vbytes * h}] : (!llvm.ptr) -> !llvm.ptr, i8",
                  f"%init{i}_{h} = scf.if %read_c -> ({vec}) {{",
                  f"  %v = llvm.load %cp{i}_{h} {{alignment = 4 : i64}} : !llvm.ptr -> {vec}",
                  f"  scf.yield %v : {vec}", "} else {", f"  scf.yield %zero : {vec}", "}"]
    types = ", ".join([vec] * len(accs))
    carried = ", ".join(f"%acc{i}_{h} = %init{i}_{h}" for i, h in accs)
    lines += dpbf16_kernels.k_steps(len(accs), carried, types)
    lines += [line for i in range(tile_rows) for line in (f"  %as{i} = arith.addi %aq{i}, %kk_bytes : i64",
                                                          f"  %ap{i} = llvm.inttoptr %as{i} : i64 to !llvm.ptr")]
    current = {acc: f"%acc{acc[0]}_{acc[1]}" for acc in accs}
    for p in range(PAIRS_PER_STEP):
        for h in range(vectors):
            lines += [f"  %bp{h}_{p} = llvm.getelementptr %b_at[{128 * p + vbytes * h}] : (!llvm.ptr) -> !llvm.ptr, i8",
                      f"  %b{h}_{p} = llvm.load %bp{h}_{p} {{alignment = 32 : i64}} : !llvm.ptr -> {pairs}"]
        for i in range(tile_rows):
            tag = f"{i}_{p}"
            lines += [f"  %ae{tag} = llvm.getelementptr %ap{i}[{4 * p}] : (!llvm.ptr) -> !llvm.ptr, i8",
                      f"  %aw{tag} = llvm.load %ae{tag} {{alignment = 2 : i64}} : !llvm.ptr -> i32",
                      f"  %ab{tag} = vector.broadcast %aw{tag} : i32 to {vec}",
                      f"  %av{tag} = llvm.bitcast %ab{tag} : {vec} to {pairs}"]
            for h in range(vectors):
                out = f"%n{i}_{h}_{p}"
                lines += _multiply_add(intrinsic, out, current[(i, h)], f"%av{tag}", f"%b{h}_{p}", vec, pairs)
                current[(i, h)] = out
    lines += [f"  scf.yield {', '.join(current[acc] for acc in accs)} : {types}", "}"]
    lines += [f"llvm.store %sum#{n}, %cp{i}_{h} {{alignment = 4 : i64}} : {vec}, !llvm.ptr"
              for n, (i, h) in enumerate(accs)]
    return lines


def _multiply_add(intrinsic: str, out: str, acc: str, a: str, b: str, vec: str, pairs: str) -> list[str]:
    """``out`` = ``acc`` + the pair sums of ``a`` x ``b``: one ``vpdpwssd``, or ``vpmaddwd`` and an add."""
    if "vpdpwssd" in intrinsic:
        return [f'  {out} = llvm.call_intrinsic "{intrinsic}"({acc}, {a}, {b}) : ({vec}, {pairs}, {pairs}) -> {vec}']
    return [f'  {out}_m = llvm.call_intrinsic "{intrinsic}"({a}, {b}) : ({pairs}, {pairs}) -> {vec}',
            f"  {out} = arith.addi {acc}, {out}_m : {vec}"]
