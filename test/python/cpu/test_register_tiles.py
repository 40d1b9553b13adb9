"""The matmul register tile per CPU level: every register AVX2 has, even when
the rows do not divide m (the last tile is peeled and masked)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from plan_programs import matmul_plan, plan_of

import xlac
from conftest import runnable_levels
from xlac.passes.cpu.plans.contraction_plan import ZERO_START, _row_block, register_tile
from xlac.passes.cpu.plans.schedule_plan import Machine

AVX2, AVX512 = Machine(2, 32), Machine(2, 64)


@pytest.mark.parametrize("m, n, machine, tile", [
    (1024, 1024, AVX2, (6, 16)),       # 6 rows peeled, not 4 that divide (25.7 -> 36.6 GFLOP/s, 1 core)
    (64, 128, AVX2, (4, 16)),          # a short matrix keeps the divisor: no edge tile
    (128, 128, AVX2, (6, 16)),         # 6-row tiles and a 2-row edge call (attention's 128 rows)
    (132, 128, AVX512, (6, 32)),       # AVX-512 keeps the divisor below 32 tiles
    (197, 64, AVX2, (6, 16)),          # no divisor worth having
    (1024, 1024, AVX512, (8, 32)),
])
def test_register_tile(m, n, machine, tile):
    assert register_tile(m, n, machine) == tile


def _check_dot_on_both_levels(m: int, k: int, n: int, b_transposed: bool = False,
                              kernels: int | None = None) -> None:
    """A StableHLO m x k x n f32 dot (B as n x k when ``b_transposed``), compiled
    for AVX2, AVX-512 and this host, run (where the host can) against numpy; with ``kernels``, that
    many kernel functions in the LLVM dialect (no transpose kernel beside it)."""
    b_shape = f"{n}x{k}" if b_transposed else f"{k}x{n}"
    text = (f"func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{b_shape}xf32>) -> tensor<{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [{int(b_transposed)}] : "
            f"(tensor<{m}x{k}xf32>, tensor<{b_shape}xf32>) -> tensor<{m}x{n}xf32>\n"
            f"  return %0 : tensor<{m}x{n}xf32>\n}}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if b_transposed else (k, n), dtype=np.float32)
    expected = a @ (b.T if b_transposed else b)
    for cpu in ("x86-64-v3", "x86-64-v4", "host"):            # AVX-512 code run where it can be
        exe = xlac.compile(text, cpu=cpu, cache=False)
        assert "scalar loops" not in exe.fusion_report()      # every schedule applied
        if kernels is not None:
            assert exe.as_text("llvm").count("llvm.func @xla_kernel_") == kernels
        if cpu in runnable_levels(cpu):
            np.testing.assert_allclose(exe(a, b), expected, rtol=2e-5, atol=2e-4)


def test_tall_matmul_with_peeled_rows_is_right():
    _check_dot_on_both_levels(200, 64, 48)     # 200 = 33 x 6 + 2 on AVX2


_PACKED = {AVX2: "xla_matmul_block_packed", AVX512: "xla_matmul"}


@pytest.mark.parametrize("machine", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_short_k_wide_b_is_split_by_columns(machine):
    """An LM head (256 x 256 x 8000): chunks of columns, B packed (95 -> 269
    GFLOP/s on AVX-512); a tall matrix keeps chunks of rows and the short-k
    schedule, its zero fill in each register tile."""
    wide = matmul_plan(240, 256, 8000, machine)      # 240: whole register tiles on both
    assert wide.sequence == _PACKED[machine]
    assert wide.params[0] == 0 and 8000 % wide.params[1] == 0 and wide.params[1] < 8000
    assert matmul_plan(4032, 256, 256, machine).sequence == "xla_matmul_short_k"


@pytest.mark.parametrize("m, k, n, avx512, avx2", [
    (256, 256, 1024, "xla_matmul_fused_b_short_k", "xla_matmul_fused_b_short_k_avx2"),  # GPT-2's linears
    (256, 256, 256, "xla_matmul_fused_b_short_k", "xla_matmul_fused_b_short_k_avx2"),   # whole 8-row tiles
    (256, 1024, 256, "xla_matmul_fused_b", "xla_matmul_fused_b_short_k_avx2"),  # its MLP's second dot
    (96, 1024, 256, "xla_matmul_fused_b", "xla_matmul_fused_b_short_k_avx2"),   # AVX2: whole-k panels
    (64, 128, 1024, "xla_matmul_fused_b_short_k", "xla_matmul_fused_b_short_k_avx2"),   # chunks of columns
    (576, 512, 96, "xla_matmul_fused_b", "xla_matmul_fused_b_short_k_avx2"),    # AVX2: many rows
    (96, 520, 644, "xla_matmul_peeled", "xla_matmul_peeled"),                 # n no multiple of the tile
])
def test_transposed_b_is_packed_by_the_transpose(m, k, n, avx512, avx2):
    """B = transpose(W) (PyTorch's Linear weights, [n, k]): the transpose is
    fused into the packing of B's panels, no transposed B in memory (GPT-2
    1.19 -> 1.12x XLA's time); AVX2 keeps its whole-block packing for many rows
    with k in one block, and makes whole-k panels where k is several blocks.
    AVX-512's fused panels go by chunks of columns: each thread makes its
    columns of B once (with chunks of rows every chunk made all of B)."""
    for machine, sequence in ((AVX512, avx512), (AVX2, avx2)):
        plan = matmul_plan(m, k, n, machine, b_transposed=True)
        assert plan.sequence == sequence
        assert len(plan.members) == sequence.startswith("xla_matmul_fused_b")
        if machine is AVX512 and plan.members:
            assert plan.params[0] == 0 and plan.params[1] < n
    _check_dot_on_both_levels(m, k, n, b_transposed=True)


def test_lm_head_tiles_start_from_zeros_in_registers():
    """GPT-2's LM head (256 x 256 x 8000, B the tied embedding transposed): k
    in one block, so on AVX2 each register tile starts from zeros in
    registers, no fill pass over C (8 MB: zeroed, read back by the tiles and
    written again), chunks of columns as before; AVX-512's 8 x 32 tiles the
    same. One kernel, no zero fill, right on every level (x86-64-v4 run where
    it can be)."""
    m, k, n = 256, 256, 8000
    avx2 = matmul_plan(m, k, n, AVX2, b_transposed=True)
    cm, cn, bn, bk, tm, tn = avx2.params
    assert avx2.sequence == "xla_matmul_fused_b_short_k_avx2" and len(avx2.members) == 1
    assert (cm, bk, tm, tn) == (0, k, 6, 16) and n % cn == 0 and cn < n
    assert matmul_plan(m, k, n, AVX512, b_transposed=True).sequence == "xla_matmul_fused_b_short_k"
    text = (f"func.func @main(%x: tensor<2x128x{k}xf32>, %w: tensor<{n}x{k}xf32>) -> tensor<2x128x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %x, %w, contracting_dims = [2] x [1] : "
            f"(tensor<2x128x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<2x128x{n}xf32>\n"
            f"  return %0 : tensor<2x128x{n}xf32>\n}}")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 128, k), dtype=np.float32)
    w = rng.standard_normal((n, k), dtype=np.float32)
    for cpu in ("x86-64-v3", "x86-64-v4", "host"):
        exe = xlac.compile(text, cpu=cpu, cache=False)
        assert "scalar loops" not in exe.fusion_report()
        assert exe.as_text("llvm").count("llvm.func @xla_kernel_") == 1      # no transpose kernel
        bufferized = exe.as_text("bufferized")
        assert "linalg.fill" not in bufferized and "vector.transfer_write %cst" not in bufferized
        if cpu in runnable_levels(cpu):
            np.testing.assert_allclose(exe(x, w), x @ w.T, rtol=2e-5, atol=2e-4)


def test_named_transpose_of_b_is_packed_too():
    """A dot contracting B's last dim (the backward pass's x . W^T) gets its B
    from xla-normalize-contractions' named linalg.transpose, not a generic: it
    is fused into the packing too. The train step's 1024 x 1024 transpose, a
    kernel of its own, was 0.33 ms (AVX-512) and 0.47 ms (AVX2) of 10 and 15.
    (AVX2 with k of several blocks: whole-k panels, test_avx2_makes_...)"""
    for machine, rows, sequence in ((AVX512, 256, "xla_matmul_fused_b"),
                                    (AVX2, 96, "xla_matmul_fused_b_short_k_avx2")):
        plan = matmul_plan(rows, 1024, 1024, machine, b_transposed=True, named=True)
        assert plan.sequence == sequence and len(plan.members) == 1
    _check_dot_on_both_levels(96, 512, 512, b_transposed=True, kernels=1)


def test_avx2_makes_whole_k_panels_of_a_transposed_b():
    """AVX2 (x86-64-v3), B = W^T with k of several 256-deep blocks (GPT-2's
    MLP down, 256 x 1024 x 256; the train step's dY . W^T): each column
    tile's whole k x 16 panel made by the transpose, row tiles from zeros in
    registers over all of k, C stored once (was: the transpose a kernel of
    its own from 128 rows, BLOCK-deep fused panels below; 0.73-0.94 of the
    time on a Zen 4, the same bits). Where that panel is past the whole-k
    block's share of L2 (k = 8192: 512 KiB) the transpose stays apart from
    128 rows and fused into BLOCK-deep panels below; SSE's 8-lane tiles
    and AVX-512 keep their plans."""
    for m, k, n, avx2 in ((256, 1024, 1024, "xla_matmul_fused_b_short_k_avx2"),
                          (64, 1024, 4096, "xla_matmul_fused_b_short_k_avx2"),
                          (1024, 4096, 256, "xla_matmul_fused_b_short_k_avx2"),
                          (256, 8192, 256, "xla_matmul_block_packed"),
                          (64, 8192, 256, "xla_matmul_fused_b"),
                          (256, 256, 1024, "xla_matmul_fused_b_short_k_avx2")):
        for named in (False, True):
            plan = matmul_plan(m, k, n, AVX2, b_transposed=True, named=named)
            assert plan.sequence == avx2 and len(plan.members) == (avx2 != "xla_matmul_block_packed")
            if avx2.endswith("_avx2"):
                assert plan.params[-3] == k and plan.params[-1] == 16      # all of k in one panel
            assert matmul_plan(m, k, n, AVX512, b_transposed=True, named=named).sequence.startswith(
                "xla_matmul_fused_b")
    assert matmul_plan(256, 1024, 256, Machine(2, 16), b_transposed=True).sequence != \
        "xla_matmul_fused_b_short_k_avx2"
    _check_dot_on_both_levels(128, 512, 256, b_transposed=True, kernels=1)


def test_widened_b_is_packed_by_the_widening():
    """bf16 weights computed in f32: the bf16 -> f32 widening of B is fused into
    the packing of its panels (a bf16 MLP 3.5 -> 3.2 ms, now faster than the
    f32 one, 3.5 ms), on AVX-512 and AVX2 (16 x 16 bf16 blocks moved as i16
    where the CPU has no bf16)."""
    plan = matmul_plan(256, 512, 256, AVX512, b_widened=True)
    assert plan.sequence == "xla_matmul_fused_b" and len(plan.members) == 1
    # AVX2: all of k (512) widened into one block (test_widened_b_whole_k)
    plan = matmul_plan(256, 512, 256, AVX2, b_widened=True)
    assert plan.sequence == "xla_matmul_block_packed_fused_b" and len(plan.members) == 1
    text = ("func.func @main(%a: tensor<256x512xbf16>, %b: tensor<512x256xbf16>) -> tensor<256x256xbf16> {\n"
            "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            "(tensor<256x512xbf16>, tensor<512x256xbf16>) -> tensor<256x256xbf16>\n"
            "  return %0 : tensor<256x256xbf16>\n}")
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(shape, dtype=np.float32).astype(bf16) for shape in ((256, 512), (512, 256)))
    expected = a.astype(np.float32) @ b.astype(np.float32)
    for cpu in ("x86-64-v3", "x86-64-v4", "host"):
        exe = xlac.compile(text, cpu=cpu, cache=False)
        assert "scalar loops" not in exe.fusion_report()
        if cpu not in runnable_levels(cpu):
            continue                          # AVX-512 code on an AVX2-only host: compiled only
        got = np.asarray(exe(a, b)).astype(np.float32)
        np.testing.assert_allclose(got, expected, rtol=2e-2, atol=2e-2 * np.abs(expected).max())


def test_short_k_wide_b_is_right():
    """Chunks of columns on both levels (64 x 128 x 1024, B transposed as a
    dot_general with B's k last, as GPT-2's LM head comes)."""
    m, k, n = 64, 128, 1024
    for machine in (AVX2, AVX512):
        plan = matmul_plan(m, k, n, machine)
        assert plan.sequence == _PACKED[machine] and plan.params[0] == 0
    _check_dot_on_both_levels(m, k, n, b_transposed=True)


@pytest.mark.parametrize("m, k, n, avx512, avx2", [
    (1024, 1024, 1024, "xla_matmul", ZERO_START),    # AVX2: 6-row tiles peeled, from zeros
    (197, 768, 768, "xla_matmul", "xla_matmul_block_packed"),     # AVX-512: chunks of 3 column tiles
    (64, 1024, 1024, "xla_matmul", ZERO_START),   # chunks of columns; AVX-512: C small
    (1030, 520, 96, "xla_matmul", "xla_matmul_block_packed"),   # 16-column chunks: one tile a block
    (96, 520, 644, "xla_matmul_peeled", "xla_matmul_peeled"),     # n no multiple of the tile
    (4, 192, 1000, "xla_matmul_peeled", "xla_matmul_peeled"),     # ViT's head: chunks of 128 of 1000
    (64, 1009, 256, "xla_matmul_peeled", "xla_matmul_peeled"),    # k blocks of 256 of 1009
])
def test_packed_matmuls(m, k, n, avx512, avx2):
    """B packed (panels, or AVX2's whole blocks) wherever n is whole tiles;
    right on both levels, every schedule applied."""
    assert matmul_plan(m, k, n, AVX512).sequence == avx512
    assert matmul_plan(m, k, n, AVX2).sequence == avx2
    _check_dot_on_both_levels(m, k, n)


@pytest.mark.parametrize("m, k, n, threads, avx2, avx512", [
    (1024, 1024, 1024, 1, (64, 1024), (128, 1024)),     # one k block: C read and written once
    (1024, 1024, 1024, 2, (64, 1024), None),            # AVX2: chunks of 128 columns; AVX-512: 128 rows
    (960, 960, 960, 1, (64, 960), None),                # AVX-512: 96 or 160 columns, no 4 tiles in 512 KiB
    (1008, 1008, 1008, 1, (144, 252), (112, 1008)),     # AVX2: 48 columns too few, 256 blocks kept
    (2048, 2048, 2048, 1, (256, 256), None),            # k beyond 1024
    (512, 256, 1024, 1, (256, 256), None),              # k one block already
    (512, 1024, 256, 2, (32, 1024), None),              # AVX2: a 32-column chunk one block; AVX-512: 64 rows
    (256, 1024, 1024, 2, (64, 1024), (128, 1024)),      # chunks of 128 columns, all 32 row tiles
])
def test_packed_block_takes_all_of_k(m, k, n, threads, avx2, avx512):
    """The whole packed blocks hold all of a k up to 1024 (and as many
    columns as keep the block 256 KiB with AVX2, 512 KiB with AVX-512)
    where that leaves four column tiles or more, or the block is an AVX2
    thread chunk's every column (AVX-512: and the chunk has 32 row tiles or
    more); else AVX2 packs 256 blocks and AVX-512 keeps its panels (None)."""
    plan = matmul_plan(m, k, n, Machine(threads, 32))
    assert plan.sequence.startswith("xla_matmul_block_packed") and plan.params[-4:-2] == avx2
    plan = matmul_plan(m, k, n, Machine(threads, 64))
    if avx512 is None:
        assert plan.sequence != "xla_matmul_block_packed" and (k <= 256 or plan.params[-3] <= 256)
    else:
        assert plan.sequence == "xla_matmul_block_packed" and plan.params[-4:-2] == avx512


@pytest.mark.parametrize("m, k, n, l1d_bytes, sequence", [
    (128, 768, 3072, 32 << 10, "xla_matmul_block_packed"),   # Zen 4's L1: a panel and A's 8 KiB do not fit
    (128, 768, 768, 32 << 10, "xla_matmul_block_packed"),
    (128, 768, 3072, 48 << 10, "xla_matmul"),                # Emerald Rapids' L1 holds both: panels kept
    (128, 768, 3072, 0, "xla_matmul"),                       # L1 not known (a named level): panels kept
    (64, 768, 3072, 32 << 10, "xla_matmul"),                 # 8 row tiles: too few either way
])
def test_avx512_whole_k_block_from_16_row_tiles_with_a_small_l1(m, k, n, l1d_bytes, sequence):
    """AVX-512 chunks of 16 to 31 row tiles take the whole-k block where L1
    cannot hold a 256 x 32 panel beside a row tile's A; else the panels."""
    plan = matmul_plan(m, k, n, Machine(1, 64, l1d_bytes))
    assert plan.sequence == sequence
    if sequence == "xla_matmul_block_packed":
        assert plan.params[-3] == k


@pytest.mark.parametrize("l1d_bytes, sequence", [
    (32 << 10, "xla_matmul_block_packed_epilogue_2d"),   # Zen 4: the whole-k block, its epilogue in it
    (48 << 10, "xla_matmul_epilogue_2d"),                # the panels, the epilogue after them
    (0, "xla_matmul_epilogue_2d"),
])
def test_avx512_matmul_epilogue_with_the_l1s_plan(l1d_bytes, sequence):
    """A matmul whose result a bias add reads runs its epilogue in the plan the
    L1 gives it: the whole-k block's epilogue variant where L1 is small."""
    t = "tensor<128x3072xf32>"
    text = ("#id = affine_map<(i, j) -> (i, j)>\n"
            f"func.func @main(%a: tensor<128x768xf32>, %b: tensor<768x3072xf32>, %r: {t}) -> {t} {{\n"
            f"  %z = arith.constant 0.0 : f32\n  %e = tensor.empty() : {t}\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {t}) -> {t}\n"
            f"  %m = linalg.matmul ins(%a, %b : tensor<128x768xf32>, tensor<768x3072xf32>) outs(%f : {t}) -> {t}\n"
            "  %o = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = [\"parallel\", \"parallel\"]}"
            f" ins(%m, %r : {t}, {t}) outs(%e : {t}) {{\n"
            "  ^bb0(%x: f32, %y: f32, %out: f32):\n    %s = arith.addf %x, %y : f32\n    linalg.yield %s : f32\n"
            f"  }} -> {t}\n  return %o : {t}\n}}")
    assert plan_of(text, "linalg.generic", Machine(1, 64, l1d_bytes)).sequence == sequence


def test_l1d_bytes_of_a_named_level_is_not_known():
    from xlac.cpu_model import cpu_model
    assert cpu_model("x86-64-v4").l1d_bytes == 0 and cpu_model("x86-64-v3").l1d_bytes == 0


def _plain_dot(m: int, k: int, n: int, seed: int) -> tuple[str, np.ndarray, np.ndarray]:
    """An m x k x n f32 dot_general's program and random inputs."""
    text = (f"func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            f"(tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>\n"
            f"  return %0 : tensor<{m}x{n}xf32>\n}}")
    rng = np.random.default_rng(seed)
    return text, rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)


def test_whole_k_block_is_right_on_every_level():
    """k = 640 in one packed block of a 64-column chunk (x86-64-v2's 6 x 8
    tiles and AVX2's 6 x 16), run on each level the host has against numpy;
    AVX-512 compiled (its panels: C, 98 x 512, is small)."""
    m, k, n = 98, 640, 512                                # 98 = 16 x 6 + 2: rows peeled too
    for machine in (Machine(1, 16), Machine(1, 32)):
        assert matmul_plan(m, k, n, machine).params[-4:-2] == (64, 640)
    text, a, b = _plain_dot(m, k, n, seed=5)
    for cpu in ("x86-64-v2", "x86-64-v3", "x86-64-v4"):
        exe = xlac.compile(text, cpu=cpu, cache=False, options=xlac.Options().replace(num_threads=1))
        assert "scalar loops" not in exe.fusion_report()
        if cpu in runnable_levels(cpu):
            np.testing.assert_allclose(exe(a, b), a @ b, rtol=2e-5, atol=2e-4)


def test_avx512_whole_k_block_sums_as_the_panels_do():
    """AVX-512's whole-k block (one thread: 266 x 640 x 768 in 640 x 192
    blocks, 33 row tiles of 8 and 2 rows peeled) and its 160-deep panels (two
    threads, chunks of 96 columns) run the same FMAs in the same k order from
    0: equal bit for bit."""
    if runnable_levels("x86-64-v4") != ["x86-64-v4"]:
        pytest.skip("x86-64-v4 code runs only where the host has AVX-512")
    m, k, n = 266, 640, 768
    assert matmul_plan(m, k, n, Machine(1, 64)).params[-4:] == (192, 640, 8, 32)
    assert matmul_plan(m, k, n, Machine(2, 64)).sequence == "xla_matmul"
    text, a, b = _plain_dot(m, k, n, seed=6)
    whole, panels = (xlac.compile(text, cpu="x86-64-v4", cache=False,
                                  options=xlac.Options().replace(num_threads=threads))(a, b)
                     for threads in (1, 2))
    np.testing.assert_array_equal(whole, panels)


def test_tall_chunk_is_cut_into_row_blocks():
    """A chunk's rows of a 256-deep block of A stay in L2 (512 KiB) or are cut
    into blocks that do, in whole register tiles."""
    assert _row_block(128, 256, 8) == 0
    assert _row_block(1024, 256, 8) == 512
    assert _row_block(1024, 256, 6) == 510
    assert _row_block(1024, 100, 8) == 0


def test_small_l1_epilogue_plan_gives_the_panels_bits(monkeypatch):
    """A 32 KiB L1 (Zen 4) gives AVX-512's dot-plus-bias the whole-k block with
    its epilogue in it; the results are bit for bit those of the panels' plan
    (an L1 not known) and numpy's to rounding. Run where the host has AVX-512:
    no named level has an L1 size, so it is set here as a host's would be."""
    m, k, n = 128, 512, 256
    t = f"tensor<{m}x{n}xf32>"
    add = (f"func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %r: tensor<{n}xf32>) -> {t} {{\n"
           f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
           f"(tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> {t}\n"
           f"  %1 = stablehlo.broadcast_in_dim %r, dims = [1] : (tensor<{n}xf32>) -> {t}\n"
           f"  %2 = stablehlo.add %0, %1 : {t}\n  return %2 : {t}\n}}")
    assert matmul_plan(m, k, n, Machine(1, 64, 32 << 10)).sequence == "xla_matmul_block_packed"
    assert matmul_plan(m, k, n, Machine(1, 64, 0)).sequence == "xla_matmul"
    if runnable_levels("x86-64-v4") != ["x86-64-v4"]:
        pytest.skip("x86-64-v4 code runs only where the host has AVX-512")
    from xlac import cpu_model
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    r = rng.standard_normal(n, dtype=np.float32)
    one_thread = xlac.Options.from_env().replace(num_threads=1)
    panels = xlac.compile(add, cpu="x86-64-v4", cache=False, options=one_thread)(a, b, r)
    monkeypatch.setattr(cpu_model.CpuModel, "l1d_bytes", property(lambda self: 32 << 10))
    whole_k = xlac.compile(add, cpu="x86-64-v4", cache=False, options=one_thread)(a, b, r)
    np.testing.assert_array_equal(whole_k, panels)
    np.testing.assert_allclose(whole_k, a @ b + r, rtol=2e-5, atol=2e-4)


def test_avx2_transposed_b_panels_in_eight_by_eight_register_transposes():
    """AVX2's fused-B panels with k in one block (an LM head, 240 x 256 x 512,
    B the [n, k] weight transposed) are made in 8 x 8 blocks, each transposed
    in its 8 ymm registers by AVX2's unpack/shuffle/permute sequence: no
    16-lane vectors left (a 16 x 16 block, 32 ymm values, spilled to the
    stack). AVX-512's plan keeps the 16 x 16 blocks. The panels hold the
    same values, so the result is the same as before."""
    m, k, n = 240, 256, 512
    assert matmul_plan(m, k, n, AVX2, b_transposed=True).sequence == "xla_matmul_fused_b_short_k_avx2"
    assert matmul_plan(m, k, n, AVX512, b_transposed=True).sequence == "xla_matmul_fused_b_short_k"
    text = (f"func.func @main(%x: tensor<{m}x{k}xf32>, %w: tensor<{n}x{k}xf32>) -> tensor<{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [1] : "
            f"(tensor<{m}x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<{m}x{n}xf32>\n"
            f"  return %0 : tensor<{m}x{n}xf32>\n}}")
    avx2 = xlac.compile(text, cpu="x86-64-v3", cache=False)
    vectorized = avx2.as_text("llvm")
    assert "vector<16xf32>" not in vectorized and "vector<8xf32>" in vectorized
    if "x86-64-v3" not in runnable_levels("x86-64-v3"):
        pytest.skip("this CPU cannot run x86-64-v3 code (compiled: checked)")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((n, k), dtype=np.float32)
    np.testing.assert_allclose(avx2(x, w), x @ w.T, rtol=2e-5, atol=2e-4)
