"""Batched and matrix-vector register tiles: attention's P.V and Q.K^T, the
short-k batch schedules that start their tiles from zeros in registers, and
the peeled edge tiles (the 2-D matmul's tiles are in test_register_tiles.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

P_TIMES_V = """
func.func @main(%v: tensor<2x256x4x32xf32>, %p: tensor<2x4x128x256xf32>) -> tensor<2x4x32x128xf32> {
  %0 = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3]
    : (tensor<2x256x4x32xf32>, tensor<2x4x128x256xf32>) -> tensor<2x4x32x128xf32>
  return %0 : tensor<2x4x32x128xf32>
}
"""


def test_batched_dot_swaps_its_operands_to_transpose_less():
    """Attention's P.V written V first (flax's U-Net): the operands are swapped
    (C^T = P.V) so that the probabilities are not transposed (a U-Net level
    48 vs 85 ms); right on both levels."""
    rng = np.random.default_rng(3)
    v = rng.standard_normal((2, 256, 4, 32), dtype=np.float32)
    p = rng.random((2, 4, 128, 256), dtype=np.float32)
    for cpu in ("x86-64-v3", "host"):
        exe = xlac.compile(P_TIMES_V, cpu=cpu, cache=False)
        linalg = exe.as_text("linalg")
        assert "tensor<8x128x256xf32>, tensor<8x256x32xf32>" in linalg      # P as the rows
        np.testing.assert_allclose(exe(v, p), np.einsum("bkhd,bhqk->bhdq", v, p), rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("rows", [1, 2])
@pytest.mark.parametrize("explicit_transpose", [False, True], ids=["dot_general", "transpose_op"])
def test_matrix_vector_product_reads_the_weight_as_stored(rows, explicit_transpose):
    """One or two rows of x against a PyTorch Linear's [n, k] weight (a
    classifier head, a decoder step): the dot reads the weight as stored, a
    row reduction per output, whether the export contracts its last dim or
    transposes it first (xla-fold-transposes folds that transpose into the
    dot). Before, a kernel transposed the weight and 8-row register tiles
    ran masked down to one row: 1 x 1280 x 1000 took 1.03 ms, XLA 0.21."""
    k, n = 320, 250
    if explicit_transpose:
        body = (f"  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<{n}x{k}xf32>) -> tensor<{k}x{n}xf32>\n"
                f"  %0 = stablehlo.dot_general %x, %t, contracting_dims = [1] x [0] : "
                f"(tensor<{rows}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{rows}x{n}xf32>\n")
    else:
        body = (f"  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [1] : "
                f"(tensor<{rows}x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<{rows}x{n}xf32>\n")
    text = (f"func.func @main(%x: tensor<{rows}x{k}xf32>, %w: tensor<{n}x{k}xf32>) -> tensor<{rows}x{n}xf32> {{\n"
            + body + f"  return %0 : tensor<{rows}x{n}xf32>\n}}")
    rng = np.random.default_rng(rows)
    x, w = rng.standard_normal((rows, k), dtype=np.float32), rng.standard_normal((n, k), dtype=np.float32)
    for cpu in ("x86-64-v3", "x86-64-v4"):
        exe = xlac.compile(text, cpu=cpu, cache=False)
        linalg = exe.as_text("linalg")
        assert "linalg.transpose" not in linalg and "linalg.matmul" not in linalg
        assert "scalar loops" not in exe.fusion_report()
        if cpu in runnable_levels(cpu):
            np.testing.assert_allclose(exe(x, w), x @ w.T, rtol=2e-5, atol=2e-4)


def _batch_matmul(batch: int, m: int, k: int, n: int):
    """A batch matmul program [batch, m, k] x [batch, k, n] and normal inputs for it."""
    text = (f"func.func @main(%a: tensor<{batch}x{m}x{k}xf32>, %b: tensor<{batch}x{k}x{n}xf32>)"
            f" -> tensor<{batch}x{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]"
            f" : (tensor<{batch}x{m}x{k}xf32>, tensor<{batch}x{k}x{n}xf32>) -> tensor<{batch}x{m}x{n}xf32>\n"
            f"  return %0 : tensor<{batch}x{m}x{n}xf32>\n}}")
    rng = np.random.default_rng(0)
    return (text, rng.standard_normal((batch, m, k), dtype=np.float32),
            rng.standard_normal((batch, k, n), dtype=np.float32))


@pytest.mark.parametrize("batch, m, k, n", [(8, 192, 64, 256), (4, 96, 32, 128)])   # whole tiles on both levels
def test_short_k_batch_matmul_starts_its_tiles_from_zeros_in_registers(batch, m, k, n):
    """Attention's Q.K^T (k the head size, C the largest tensor): each register
    tile starts from zeros in registers, no fill pass over C before it (C was
    zeroed, read back and written: 9-10% slower in one-process A/B runs);
    every schedule applied and right on both levels."""
    text, a, b = _batch_matmul(batch, m, k, n)
    for cpu in ("x86-64-v3", "x86-64-v4", "host"):
        exe = xlac.compile(text, cpu=cpu, cache=False)
        assert "scalar loops" not in exe.fusion_report()
        bufferized = exe.as_text("bufferized")
        assert "linalg.fill" not in bufferized and "vector.transfer_write %cst" not in bufferized
        if cpu in runnable_levels(cpu):
            np.testing.assert_allclose(exe(a, b), a @ b, rtol=2e-5, atol=2e-4)


def _sum_in_k_order(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for each batch, each product and each partial sum rounded to f32
    in k order from 0: the order the register tiles add in where the level has
    no FMA (x86-64-v2)."""
    acc = np.zeros((a.shape[0], a.shape[1], b.shape[2]), np.float32)
    for step in range(a.shape[2]):
        acc = acc + a[:, :, step, None] * b[:, None, step, :]
    return acc


def _check_in_k_order(exe, cpu: str, a: np.ndarray, b: np.ndarray, atol: float) -> None:
    """Where ``cpu`` runs here: at x86-64-v2 (no FMA) the sums in k order bit
    for bit, elsewhere close to numpy's product."""
    if cpu not in runnable_levels(cpu):
        return
    if cpu == "x86-64-v2":
        np.testing.assert_array_equal(exe(a, b), _sum_in_k_order(a, b))
    else:
        np.testing.assert_allclose(exe(a, b), a @ b, rtol=2e-5, atol=atol)


def test_short_k_batch_matmul_with_peeled_rows_starts_from_zeros_in_registers():
    """Attention's Q.K^T with rows the register tile does not divide (512 in
    AVX2's 6-row tiles; here 256 = 42 x 6 + 4, and 8-column tiles at
    x86-64-v2): no zero fill of C before the tiles, the peeled rows' tile
    starting from zeros as the whole ones do (the fill wrote C and the tiles
    read it back: 8 MB twice for 8 x 512 x 64 x 512). Still k in order from
    0: at x86-64-v2 (no FMA) equal bit for bit to the sums in that order."""
    batch, m, k, n = 2, 256, 64, 64
    text, a, b = _batch_matmul(batch, m, k, n)
    for cpu in ("x86-64-v2", "x86-64-v3", "x86-64-v4", "host"):
        exe = xlac.compile(text, cpu=cpu, cache=False)
        assert "scalar loops" not in exe.fusion_report()
        bufferized = exe.as_text("bufferized")
        assert "linalg.fill" not in bufferized and "vector.transfer_write %cst" not in bufferized
        _check_in_k_order(exe, cpu, a, b, atol=2e-4)


def test_batch_matmul_with_k_in_two_blocks_and_b_in_l2_has_no_zero_fill():
    """Attention's P.V (8 x 512 x 512 x 64: k = 512 is the sequence, two
    256-deep blocks): each tile runs all of k from zeros in registers, one
    kernel and no fill of C before it (C was zeroed, then read back and
    written once per k block), the peeled rows' tile as well; AVX-512's 8 x 32
    tiles as AVX2's 6 x 16. k in order from 0: x86-64-v2's result is the sums
    in that order bit for bit."""
    batch, m, k, n = 2, 256, 512, 64                       # 42 6-row tiles and 4 rows
    text, a, b = _batch_matmul(batch, m, k, n)
    for cpu in ("x86-64-v2", "x86-64-v3", "x86-64-v4", "host"):
        exe = xlac.compile(text, cpu=cpu, cache=False)
        assert "scalar loops" not in exe.fusion_report()
        bufferized = exe.as_text("bufferized")
        assert "linalg.fill" not in bufferized and "vector.transfer_write %cst" not in bufferized
        assert bufferized.count("scf.forall") == 1
        _check_in_k_order(exe, cpu, a, b, atol=5e-4)


@pytest.mark.parametrize("cpu, packed", [("x86-64-v3", "memref<1x512x16xf32>"), ("x86-64-v4", None)])
def test_batch_b_whose_panels_fall_into_few_l1_sets_is_packed(cpu, packed):
    """Attention's P.V (here 2 x 256 x 512 x 64): B's rows are 256 B apart, and
    a 512-deep panel of AVX2's 16 columns read in place falls into 16 of L1's
    64 sets. At x86-64-v3 each batch's B is copied a panel at a time into a
    contiguous buffer that the row tiles read (0.76 of the time on a Zen 4);
    AVX-512's 8 x 32 tiles read it in place (packed was no faster). BERT's
    P.V (k = 128: the panel fits the sets it falls into) stays in place."""
    text, a, b = _batch_matmul(2, 256, 512, 64)
    exe = xlac.compile(text, cpu=cpu, cache=False)
    bufferized = exe.as_text("bufferized")
    allocs = re.findall(r"memref\.alloc\(\) .*: (memref<[^>]*>)", bufferized)
    assert allocs == ([packed] if packed else []), allocs
    assert "linalg.fill" not in bufferized and bufferized.count("scf.forall") == 1
    short = xlac.compile(_batch_matmul(2, 128, 128, 64)[0], cpu=cpu, cache=False)
    assert "memref.alloc" not in short.as_text("bufferized")
    _check_in_k_order(exe, cpu, a, b, atol=5e-4)


def test_peeled_edge_tiles_keep_their_accumulators_in_registers():
    """Attention's Q.K^T in ViT (12 x 197 x 64 x 197): 197 rows and columns
    leave edge tiles, peeled and masked. Each must carry its tile of C
    through the k loop in registers, like a whole tile: its mask was made
    inside the loop, so the tile was not hoisted and C was read and written,
    masked, every k step (the op at 1.9 ms against 0.6 for 12 x 192 x 64 x
    192). Every contraction's accumulator is the k loop's iteration argument,
    on both levels, and the result is right."""
    batch, m, k, n = 12, 197, 64, 197
    text, a, b = _batch_matmul(batch, m, k, n)
    for cpu in ("x86-64-v3", "x86-64-v4"):
        exe = xlac.compile(text, cpu=cpu, cache=False)
        assert "scalar loops" not in exe.fusion_report()
        contracts = [line for line in exe.as_text("bufferized").splitlines() if "vector.contract" in line]
        assert len(contracts) >= 3                                  # the whole tiles and two edges
        accumulators = [re.search(r"\} (%\w+), (%\w+), (%\w+) :", line).group(3) for line in contracts]
        assert all(re.fullmatch(r"%arg\d+", acc) for acc in accumulators), contracts
        if cpu in runnable_levels(cpu):
            np.testing.assert_allclose(exe(a, b), a @ b, rtol=2e-5, atol=2e-4)


def _matmul(m: int, k: int, n: int):
    """A 2-D matmul program [m, k] x [k, n] and normal inputs for it."""
    text = (f"func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]"
            f" : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>\n"
            f"  return %0 : tensor<{m}x{n}xf32>\n}}")
    rng = np.random.default_rng(0)
    return text, rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)


# ViT's Q.K^T (197 rows and columns: edge row, column and corner tiles) and
# its 788-row projections (4 x 197 tokens: an edge row tile)
FILLED = {"batch_12x197x64x197": (_batch_matmul(12, 197, 64, 197), 4),
          "matmul_788x192x192": (_matmul(788, 192, 192), 2)}


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("name", list(FILLED))
def test_zero_fill_of_peeled_tiles_stores_whole_tiles_unmasked(name, cpu):
    """A matmul whose tiles leave rows or columns over zeroes C in a pass
    before its tiles. The fill's row and column loops are peeled like the
    tiles': its whole tiles store unmasked, only the edge tiles under a
    mask. Tiled but not peeled, every store of the fill was masked (AVX2's
    vmaskmovps, slow on AMD: ViT's Q.K^T took 0.80 of the time unmasked on
    one Zen 4 core). Zeros either way: right on both levels."""
    (text, a, b), stores = FILLED[name]
    exe = xlac.compile(text, cpu=cpu, cache=False)
    assert "scalar loops" not in exe.fusion_report()
    zero_stores = [line for line in exe.as_text("bufferized").splitlines()
                   if re.search(r"vector\.transfer_write %cst\w*, ", line)]
    unmasked = [line for line in zero_stores if not re.search(r"\], %\w+ \{in_bounds", line)]
    assert len(unmasked) == 1 and len(zero_stores) == stores, zero_stores
    if cpu in runnable_levels(cpu):
        np.testing.assert_allclose(exe(a, b), a @ b, rtol=2e-5, atol=2e-4)
