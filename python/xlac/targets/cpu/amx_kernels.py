"""The AMX micro-kernel of bf16 x bf16 -> f32 contractions, and the tile
state the process must ask Linux for before running it.

Intel AMX (``amx_tile``, ``amx_bf16``: a host feature, never part of the
named levels x86-64-v2/v3/v4) multiplies 16 x 32 bf16 tiles by 16 x 16
k-paired bf16 tiles into 16 x 16 f32 accumulators (``tdpbf16ps``). The
kernel is generated from MLIR like the f32 micro-kernels
(xlac.targets.cpu.micro_kernels compiles and caches it) through LLVM's
AMX intrinsics that take tile numbers as immediates
(``llvm.x86.tileloadd64(i8 tile, ptr, i64 stride)``, ``llvm.x86.tdpbf16ps(
i8 dst, i8 a, i8 b)``): no ``x86_amx`` values, which the LLVM dialect
cannot spell.

``xlac_ukernel_amx_bf16_32x32(c, ldc, a, lda, b, ldb, k, rows, accumulate)``
(every argument an i64; strides in elements): C[rows x 32] (f32) (+)=
A[rows x k] (bf16) . B[k x 32] (bf16). ``rows`` and ``k`` are multiples of 32
(xla-amx-contractions pads the operands where they are not). ``lda`` 0: A is
packed (in xla-amx-calls' thread loop, xlac.passes.cpu.amx_pack): each 32-row
block's k-step of 32 is its two 16 x 32 tiles in 2 KB, 64 bytes a row. The kernel
packs B's 32 columns as k-pairs (the VNNI layout ``tdpbf16ps`` reads: row p
holds B[2p, j], B[2p+1, j] side by side) into a panel on its stack, KB rows
of k at a time, and runs C's 32 x 32 blocks as four 16 x 16 accumulators
(tiles 0-3; A's two row halves tiles 4-5, B's two column halves tiles 6-7)
over each k block. Where the time went (docs/PERFORMANCE.md, "AMX kernel: B's
panel in L1"): both operands' tiles streamed from L2 with KB 1024 (a 64 KB
panel, more than L1), B's packing before the tiles, and C's tiles, whose rows
are 4 KB apart at n = 1024 (16 lines in one L1 set). So: KB is 512, the
panel (32 KB) stays in L1 over the call's row blocks, A's tiles (read once a
call) load with ``tileloaddt1`` (not kept in L1: they would evict the
panel); each k-step packs its share of the next k block's pairs into a
second panel (the two alternate), beside the tile products; between k blocks
the accumulators go to and from partial sums on the stack (4 KB a row block,
contiguous) and only the last k block stores into C. The same products in
the same order (f32 stored and loaded as it is): results bitwise as before.
Each call loads its tile configuration (``ldtilecfg``: per thread, cheap)
and releases the tiles at its end.

Numerics: ``tdpbf16ps`` adds each k-pair's two products (exact in f32)
before adding them to the accumulator, treats denormal inputs as zero,
flushes denormal results and ignores MXCSR (Intel SDM): a summation order of
its own, within the tolerances the conformance suite checks bf16 dots with
(docs/PERFORMANCE.md's AMX section).
"""

from __future__ import annotations

import functools

SYMBOL = "xlac_ukernel_amx_bf16_32x32"
KB = 512                           # k rows of B packed at a time: 32 KB panels, in L1
FEATURES = ("amx_bf16", "amx_tile")

_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA = 158, 0x1023, 18


def has_amx(features) -> bool:
    """Whether a CPU of ``features`` runs the kernel."""
    return all(f in features for f in FEATURES)


@functools.cache
def request_tile_state() -> bool:
    """Ask Linux (once per process) to let this process's threads use AMX's
    tile data: ``arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)``. Without
    it the first tile instruction kills the process (SIGILL). False where the
    request fails (no AMX, a kernel before 5.16, not Linux): harmless there."""
    import ctypes
    import os
    system = os.uname()                # not platform: a cache hit imports no more than it needs
    if system.sysname != "Linux" or system.machine != "x86_64":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syscall(ctypes.c_long(_ARCH_PRCTL), ctypes.c_long(_ARCH_REQ_XCOMP_PERM),
                            ctypes.c_long(_XFEATURE_XTILEDATA)) == 0
    except (OSError, AttributeError):
        return False


def usable(features) -> bool:
    """Whether code for a CPU of ``features`` compiled here may use the kernel:
    the CPU has AMX and this process got the tile state."""
    return has_amx(features) and request_tile_state()


def _config() -> str:
    """ldtilecfg's 64 bytes: palette 1; tiles 0-7 16 rows of 64 bytes."""
    data = [0] * 64
    data[0] = 1
    for tile in range(8):
        data[16 + 2 * tile] = 64   # colsb, a little-endian u16
        data[48 + tile] = 16       # rows
    return ", ".join(str(v) for v in data)


def _call(name: str, *operands: tuple[str, str]) -> str:
    values = ", ".join(v for v, _ in operands)
    types = ", ".join(t for _, t in operands)
    return f'llvm.call_intrinsic "llvm.x86.{name}"({values}) : ({types}) -> ()'


def _tile(n: int) -> tuple[str, str]:
    return (f"%t{n}", "i8")


def _ptr(name: str) -> tuple[str, str]:
    return (name, "!llvm.ptr")


def _i64(name: str) -> tuple[str, str]:
    return (name, "i64")


def mlir_text() -> str:
    """The kernel as MLIR: func, scf, arith, vector and llvm ops."""
    tiles = [f"  %t{n} = llvm.mlir.constant({n} : i8) : i8" for n in range(8)]
    return "\n".join([
        f"func.func @{SYMBOL}(%c: i64, %ldc: i64, %a: i64, %lda: i64, %b: i64, %ldb: i64, "
        "%k: i64, %rows: i64, %accumulate: i64) {",
        *tiles,
        "  %c0 = arith.constant 0 : i64",
        "  %c1 = arith.constant 1 : i64",
        "  %c2 = arith.constant 2 : i64",
        "  %c4 = arith.constant 4 : i64",
        "  %c16 = arith.constant 16 : i64",
        "  %c32 = arith.constant 32 : i64",
        "  %c64 = arith.constant 64 : i64",
        "  %c128 = arith.constant 128 : i64",
        f"  %kb = arith.constant {KB} : i64",
        "  %n64 = llvm.mlir.constant(64 : i64) : i64",
        f"  %npanel = llvm.mlir.constant({KB * 64} : i64) : i64",
        "  %cfg = llvm.alloca %n64 x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr",
        f"  %cfgv = llvm.mlir.constant(dense<[{_config()}]> : vector<64xi8>) : vector<64xi8>",
        "  llvm.store %cfgv, %cfg {alignment = 64 : i64} : vector<64xi8>, !llvm.ptr",
        "  %panel0 = llvm.alloca %npanel x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr",
        "  %panel1 = llvm.alloca %npanel x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr",
        "  " + _call("ldtilecfg", _ptr("%cfg")),
        "  %ldc_bytes = arith.muli %ldc, %c4 : i64",
        *["  " + line for line in a_layout()],
        "  %ldb_bytes = arith.muli %ldb, %c2 : i64",
        "  %from_c = arith.cmpi ne, %accumulate, %c0 : i64",
        # partial sums only where there is more than one k block (rows <= 256 from
        # xla-amx-calls: 32 KB at most)
        "  %row_bytes = arith.muli %rows, %c128 : i64",
        "  %blocks_k = arith.cmpi sgt, %k, %kb : i64",
        "  %partial_bytes = arith.select %blocks_k, %row_bytes, %c64 : i64",
        "  %partials = llvm.alloca %partial_bytes x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr",
        "  %kn_first = arith.minsi %k, %kb : i64",
        "  %pairs_first = arith.divsi %kn_first, %c2 : i64",
        *["  " + line for line in pack_pairs("%c0", "%pairs_first", "%c0", "%panel0", "first")],
        "  scf.for %k0 = %c0 to %k step %kb : i64 {",
        "    %left = arith.subi %k, %k0 : i64",
        "    %kn = arith.minsi %left, %kb : i64",
        *["    " + line for line in _next_block()],
        "    %started = arith.cmpi ne, %k0, %c0 : i64",
        "    %last = arith.cmpi sge, %k_next, %k : i64",
        "    scf.for %r = %c0 to %rows step %c32 : i64 {",
        *["      " + line for line in _block()],
        "    }",
        "  }",
        "  " + _call("tilerelease"),
        "  return",
        "}",
    ]) + "\n"


def pack_pairs(lo: str, hi: str, kstart: str, panel: str, tag: str) -> list[str]:
    """Pairs ``lo`` to ``hi`` of B[kstart :, 0 : 32] into ``panel`` as k-pairs:
    128 bytes a pair."""
    mask = ", ".join(f"{j}, {j + 32}" for j in range(32))
    return [
        f"scf.for %p_{tag} = {lo} to {hi} step %c1 : i64 {{",
        f"  %row_{tag} = arith.muli %p_{tag}, %c2 : i64",
        f"  %krow_{tag} = arith.addi {kstart}, %row_{tag} : i64",
        f"  %off0_{tag} = arith.muli %krow_{tag}, %ldb_bytes : i64",
        f"  %off1_{tag} = arith.addi %off0_{tag}, %ldb_bytes : i64",
        f"  %a0_{tag} = arith.addi %b, %off0_{tag} : i64",
        f"  %a1_{tag} = arith.addi %b, %off1_{tag} : i64",
        f"  %p0_{tag} = llvm.inttoptr %a0_{tag} : i64 to !llvm.ptr",
        f"  %p1_{tag} = llvm.inttoptr %a1_{tag} : i64 to !llvm.ptr",
        f"  %v0_{tag} = llvm.load %p0_{tag} {{alignment = 2 : i64}} : !llvm.ptr -> vector<32xi16>",
        f"  %v1_{tag} = llvm.load %p1_{tag} {{alignment = 2 : i64}} : !llvm.ptr -> vector<32xi16>",
        f"  %both_{tag} = llvm.shufflevector %v0_{tag}, %v1_{tag} [{mask}] : vector<32xi16>",
        f"  %to_{tag} = arith.muli %p_{tag}, %c128 : i64",
        f"  %dst_{tag} = llvm.getelementptr {panel}[%to_{tag}] : (!llvm.ptr, i64) -> !llvm.ptr, i8",
        f"  llvm.store %both_{tag}, %dst_{tag} {{alignment = 64 : i64}} : vector<64xi16>, !llvm.ptr",
        "}",
    ]


def _next_block() -> list[str]:
    """The panels of this k block (``%cur``) and the next (``%nxt``: the
    panels alternate), the next block's k-pairs (``%pairs_next``, 0 after the
    last) and how many of them each k-step of this block packs (``%per_step``:
    all of this block's steps share them, so the packing runs beside the tile
    products instead of before them)."""
    return [
        "%blk = arith.divsi %k0, %kb : i64",
        "%parity = arith.andi %blk, %c1 : i64",
        "%odd = arith.cmpi ne, %parity, %c0 : i64",
        "%cur = llvm.select %odd, %panel1, %panel0 : i1, !llvm.ptr",
        "%nxt = llvm.select %odd, %panel0, %panel1 : i1, !llvm.ptr",
        "%k_next = arith.addi %k0, %kb : i64",
        "%left_next = arith.subi %k, %k_next : i64",
        "%kn_next0 = arith.minsi %left_next, %kb : i64",
        "%kn_next = arith.maxsi %kn_next0, %c0 : i64",
        "%pairs_next = arith.divsi %kn_next, %c2 : i64",
        "%row_blocks = arith.divsi %rows, %c32 : i64",
        "%k_steps = arith.divsi %kn, %c32 : i64",
        "%steps0 = arith.muli %row_blocks, %k_steps : i64",
        "%steps = arith.maxsi %steps0, %c1 : i64",
        "%steps_less = arith.subi %steps, %c1 : i64",
        "%pairs_up = arith.addi %pairs_next, %steps_less : i64",
        "%per_step = arith.divsi %pairs_up, %steps : i64",
    ]


def a_layout() -> list[str]:
    """How A's tiles lie: row-major with row stride lda, or (lda 0) packed by
    ``pack_a`` (in amx_calls' thread loop): per 32-row block and 32-k step, its two
    16 x 32 tiles in 2 KB, 64 bytes a row. ``%a_row``: bytes per row of r,
    ``%a_k``: per element of k, ``%a_half``: the second 16 rows' offset,
    ``%a_stride``: a tile row's stride."""
    return [
        "%packed = arith.cmpi eq, %lda, %c0 : i64",
        "%lda_bytes = arith.muli %lda, %c2 : i64",
        "%k_bytes = arith.muli %k, %c2 : i64",
        "%half_rows = arith.muli %lda_bytes, %c16 : i64",
        "%c1024 = arith.constant 1024 : i64",
        "%a_row = arith.select %packed, %k_bytes, %lda_bytes : i64",
        "%a_k = arith.select %packed, %c64, %c2 : i64",
        "%a_half = arith.select %packed, %c1024, %half_rows : i64",
        "%a_stride = arith.select %packed, %c64, %lda_bytes : i64",
    ]


def _step() -> list[str]:
    """One k-step of 32: A's two 16-row tiles (4, 5), B's two 16-column halves
    (6, 7), four products. Each load comes right before its tile's first
    product, so that the next step's first loads may overlap this step's last
    products (against all four loads first: the same with A as it is, 7%
    faster in one run with A packed; docs/PERFORMANCE.md)."""
    load = {"a0": _call("tileloaddt164", _tile(4), _ptr("%ap0"), _i64("%a_stride")),
            "a1": _call("tileloaddt164", _tile(5), _ptr("%ap1"), _i64("%a_stride")),
            "b0": _call("tileloadd64", _tile(6), _ptr("%bp0"), _i64("%c128")),
            "b1": _call("tileloadd64", _tile(7), _ptr("%bp1"), _i64("%c128"))}
    mul = {"c00": _call("tdpbf16ps", _tile(0), _tile(4), _tile(6)),
           "c01": _call("tdpbf16ps", _tile(1), _tile(4), _tile(7)),
           "c10": _call("tdpbf16ps", _tile(2), _tile(5), _tile(6)),
           "c11": _call("tdpbf16ps", _tile(3), _tile(5), _tile(7))}
    order = ["a0", "b0", "c00", "b1", "c01", "a1", "c10", "c11"]
    return [load.get(name) or mul[name] for name in order]


def _pack_share() -> list[str]:
    """This k-step's share of the next block's packing: pairs from (r / 32 *
    k_steps + kk / 32) * per_step on, at most ``per_step``."""
    return [
        "%rb = arith.divsi %r, %c32 : i64",
        "%ks = arith.divsi %kk, %c32 : i64",
        "%rb_steps = arith.muli %rb, %k_steps : i64",
        "%step = arith.addi %rb_steps, %ks : i64",
        "%share_lo0 = arith.muli %step, %per_step : i64",
        "%share_lo = arith.minsi %share_lo0, %pairs_next : i64",
        "%share_hi0 = arith.addi %share_lo, %per_step : i64",
        "%share_hi = arith.minsi %share_hi0, %pairs_next : i64",
        *pack_pairs("%share_lo", "%share_hi", "%k_next", "%nxt", "next"),
    ]


def _block() -> list[str]:
    """C[r : r + 32, 0 : 32] (+)= A[r : r + 32, k0 : k0 + kn] . panel."""
    c_tiles = [(0, "%cr0", "0"), (1, "%cr0", "64"), (2, "%cr1", "0"), (3, "%cr1", "64")]
    lines = [
        "%r16 = arith.addi %r, %c16 : i64",
        "%crow0 = arith.muli %r, %ldc_bytes : i64",
        "%crow1 = arith.muli %r16, %ldc_bytes : i64",
        "%cb0 = arith.addi %c, %crow0 : i64",
        "%cb1 = arith.addi %c, %crow1 : i64",
        "%cr0 = llvm.inttoptr %cb0 : i64 to !llvm.ptr",
        "%cr1 = llvm.inttoptr %cb1 : i64 to !llvm.ptr",
        "%pr_off = arith.muli %r, %c128 : i64",
        "%pr = llvm.getelementptr %partials[%pr_off] : (!llvm.ptr, i64) -> !llvm.ptr, i8",
        "scf.if %started {",
        *["  " + line for line in _partial_tiles("tileloadd64", "pl")],
        "} else {",
        "  scf.if %from_c {",
        *[f"    %ct{n} = llvm.getelementptr {base}[{off}] : (!llvm.ptr) -> !llvm.ptr, i8\n      "
          + _call("tileloadd64", _tile(n), _ptr(f"%ct{n}"), _i64("%ldc_bytes")) for n, base, off in c_tiles],
        "  } else {",
        *["    " + _call("tilezero", _tile(n)) for n in range(4)],
        "  }",
        "}",
        "%arow0 = arith.muli %r, %a_row : i64",
        "%k0_bytes = arith.muli %k0, %a_k : i64",
        "%ab0 = arith.addi %a, %arow0 : i64",
        "%ab1 = arith.addi %ab0, %a_half : i64",
        "%ak0 = arith.addi %ab0, %k0_bytes : i64",
        "%ak1 = arith.addi %ab1, %k0_bytes : i64",
        "scf.for %kk = %c0 to %kn step %c32 : i64 {",
        "  %kk_bytes = arith.muli %kk, %a_k : i64",
        "  %aa0 = arith.addi %ak0, %kk_bytes : i64",
        "  %aa1 = arith.addi %ak1, %kk_bytes : i64",
        "  %ap0 = llvm.inttoptr %aa0 : i64 to !llvm.ptr",
        "  %ap1 = llvm.inttoptr %aa1 : i64 to !llvm.ptr",
        "  %boff = arith.muli %kk, %c64 : i64",         # kk / 2 pairs of 128 bytes
        "  %bp0 = llvm.getelementptr %cur[%boff] : (!llvm.ptr, i64) -> !llvm.ptr, i8",
        "  %bp1 = llvm.getelementptr %bp0[64] : (!llvm.ptr) -> !llvm.ptr, i8",
        *["  " + line for line in _step()],
        *["  " + line for line in _pack_share()],
        "}",
    ]
    lines += ["scf.if %last {"]
    for n, base, off in c_tiles:
        lines += [f"  %cs{n} = llvm.getelementptr {base}[{off}] : (!llvm.ptr) -> !llvm.ptr, i8",
                  "  " + _call("tilestored64", _tile(n), _ptr(f"%cs{n}"), _i64("%ldc_bytes"))]
    return lines + ["} else {", *["  " + line for line in _partial_tiles("tilestored64", "ps")], "}"]


def _partial_tiles(op: str, tag: str) -> list[str]:
    """The block's four accumulators to or from its 4 KB of partial sums
    (between k blocks: one tile after the other, 64 bytes a row, where C's
    rows may be 4 KB apart and share L1's sets)."""
    lines = []
    for n in range(4):
        lines += [f"%{tag}{n} = llvm.getelementptr %pr[{1024 * n}] : (!llvm.ptr) -> !llvm.ptr, i8",
                  _call(op, _tile(n), _ptr(f"%{tag}{n}"), _i64("%c64"))]
    return lines
