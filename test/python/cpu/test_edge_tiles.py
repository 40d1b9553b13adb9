"""A matmul's masked edge tile (rows the register tile does not divide) as a
call of the micro-kernel of its kept rows (passes/cpu/edge_tile_loops.py):
the same results bit for bit as the masked tile compiled into the program."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

# GPT-2's first MLP dot in small: two images of 128 rows (21 x 6 + 2 at
# AVX2, 16 x 8 at AVX-512: no edge there), bias and tanh in the register tiles
_PROGRAM = """
func.func @main(%x: tensor<2x128x256xf32>, %w: tensor<256x64xf32>, %b: tensor<64xf32>) -> tensor<2x128x64xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0] : (tensor<2x128x256xf32>, tensor<256x64xf32>) -> tensor<2x128x64xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<64xf32>) -> tensor<2x128x64xf32>
  %2 = stablehlo.add %0, %1 : tensor<2x128x64xf32>
  %3 = stablehlo.tanh %2 : tensor<2x128x64xf32>
  return %3 : tensor<2x128x64xf32>
}
"""


def _compile(cpu: str, micro_kernels: bool):
    options = xlac.Options.from_env().replace(micro_kernels=micro_kernels, cpu=cpu, num_threads=2)
    return xlac.compile(_PROGRAM, options=options, cache=False)


@pytest.mark.parametrize("cpu", ["x86-64-v3"])
def test_edge_tile_calls_the_kept_rows_kernel_with_the_same_results(cpu):
    called = _compile(cpu, True)
    llvm = called.as_text("llvm")
    assert "xlac_ukernel_f32_2x16" in llvm and "xlac_ukernel_f32_6x16" in llvm
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code")
    rng = np.random.default_rng(7)
    args = (rng.standard_normal((2, 128, 256), dtype=np.float32) * np.float32(0.1),
            rng.standard_normal((256, 64), dtype=np.float32) * np.float32(0.1),
            rng.standard_normal(64, dtype=np.float32))
    got, expected = np.asarray(called(*args)), np.asarray(_compile(cpu, False)(*args))
    assert np.array_equal(got, expected)


def _dot(m: int, k: int, n: int) -> str:
    return f"""
func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %c : tensor<{m}x{n}xf32>
}}"""


def _c_tiles_written_inside_k_loops(text: str, tile: str) -> int:
    """k loops that carry nothing (``step %c1 {``) and hold both a
    contraction and a write of a ``tile`` vector of C: a read-modify-write of
    C at every k step (a batch loop, also step 1, holds them only deeper)."""
    open_loops, found = [], 0                    # per open region: [k-like, contracts, writes C]
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.endswith("{"):
            is_for = stripped.startswith("scf.for") or " = scf.for " in stripped
            open_loops.append([is_for and "step %c1 {" in stripped, False, False])
        elif stripped == "}" and open_loops:
            k_like, contracts, writes = open_loops.pop()
            found += k_like and contracts and writes
        elif open_loops and "vector.contract" in stripped:
            open_loops[-1][1] = True
        elif open_loops and "vector.transfer_write" in stripped and tile in stripped:
            open_loops[-1][2] = True
    return found


@pytest.mark.parametrize("cpu, tile", [("x86-64-v4", "vector<8x32xf32>"), ("x86-64-v3", "vector<6x16xf32>")])
def test_peeled_row_edge_keeps_c_in_registers_over_k(cpu, tile):
    """ViT's 788-row MLP dot on one thread (rows the tile does not divide, C
    zeroed first, B in packed panels): the masked edge tile's mask is made
    once, outside its k loop, so C is read before the loop and written after
    it, as for a whole tile. Written inside, each k step read and wrote C
    under a mask: 18-24 ms against 2.2 on an AMD Zen 4 at AVX-512, depending
    on where A lay in memory."""
    options = xlac.Options.from_env().replace(cpu=cpu, num_threads=1)
    exe = xlac.compile(_dot(788, 192, 768), options=options, cache=False)
    text = exe.as_text("bufferized")
    assert tile in text
    assert _c_tiles_written_inside_k_loops(text, tile) == 0
