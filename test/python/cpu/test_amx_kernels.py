"""bf16 x bf16 -> f32 matmuls on the AMX micro-kernel (xla-amx-contractions,
xla-amx-calls, xlac.targets.cpu.amx_kernels): chosen only at the host level
of a CPU with AMX, the passes' rewrites, the kernel compiled for an AMX
target anywhere, and (where this host has AMX) results against f64 numpy."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from bf16_programs import BF16_MLP_F32_SUMS

import xlac
from xlac.context import new_context
from xlac.cpu_model import CpuModel, cpu_model, host_features
from xlac.mlir import ir
from xlac.passes.cpu import amx_pack
from xlac.pipeline.pass_manager import run_passes
from xlac.targets.cpu import amx_kernels
from xlac.targets.cpu.pipeline import uses_amx

_AMX = ("amx_bf16", "amx_tile", "avx512f", "avx512_bf16", "fma")
_HOST_AMX = amx_kernels.has_amx(host_features())


def test_amx_only_at_the_host_level_of_a_cpu_with_it(monkeypatch):
    monkeypatch.setattr(amx_kernels, "request_tile_state", lambda: True)
    assert uses_amx(CpuModel("host", _AMX), micro_kernels=True)
    assert not uses_amx(CpuModel("host", _AMX), micro_kernels=False)
    assert not uses_amx(CpuModel("host", ("avx2", "fma")), micro_kernels=True)
    for level in ("x86-64-v2", "x86-64-v3", "x86-64-v4"):
        assert not uses_amx(cpu_model(level), micro_kernels=True)
    monkeypatch.setattr(amx_kernels, "request_tile_state", lambda: False)   # Linux said no
    assert not uses_amx(CpuModel("host", _AMX), micro_kernels=True)


def test_tile_state_request_is_harmless_anywhere():
    assert amx_kernels.request_tile_state() in (True, False)
    assert amx_kernels.request_tile_state() == amx_kernels.request_tile_state()


_WIDENED = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<64x96xbf16>, %b: tensor<96x40xbf16>) -> tensor<64x40xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<64x96xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x96xbf16>) outs(%ea : tensor<64x96xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    %r = arith.maximumf %w, %zero : f32
    %n = arith.truncf %r : f32 to bf16
    %e = arith.extf %n : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<64x96xf32>
  %eb = tensor.empty() : tensor<96x40xf32>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<96x40xbf16>) outs(%eb : tensor<96x40xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<96x40xf32>
  %ec = tensor.empty() : tensor<64x40xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<64x40xf32>) -> tensor<64x40xf32>
  %p = linalg.matmul ins(%wa, %wb : tensor<64x96xf32>, tensor<96x40xf32>) outs(%c : tensor<64x40xf32>) -> tensor<64x40xf32>
  return %p : tensor<64x40xf32>
}
"""


def _rewritten(pipeline: list[str]) -> str:
    with new_context() as context, ir.Location.unknown(context):
        module = ir.Module.parse(_WIDENED)
        run_passes(module, pipeline)
        return str(module)


def test_widened_bf16_matmul_becomes_a_marked_bf16_matmul_padded_to_32():
    text = _rewritten(["xla-amx-contractions{min-work=1}"])
    # A: the producer again, writing bf16; B: the bf16 argument itself; C from zeros
    assert "xla.amx, xla.amx_zeros" in text
    assert "ins(%arg1 : tensor<96x40xbf16>)" not in text          # B's widening is gone
    assert "tensor<64x96xbf16>, tensor<96x64xbf16>) outs(" in text   # B's columns padded 40 -> 64
    assert "tensor.extract_slice" in text and "linalg.fill" not in text
    assert text.count("linalg.generic") == 1                        # A's, narrowed


def test_small_matmul_keeps_todays_path():
    text = _rewritten(["xla-amx-contractions"])                    # 64 x 96 x 40: under min-work
    assert "xla.amx" not in text


def test_marked_matmul_becomes_a_thread_loop_of_kernel_calls():
    from xlac.targets.cpu.pipeline import bufferize
    steps = [s for s in bufferize(threads=2, vector_bytes=32) if s != "xla-amx-contractions"]
    text = _rewritten(["xla-amx-contractions{min-work=1}", *steps, "xla-amx-calls"])
    assert "scf.forall" in text and "call @xlac_ukernel_amx_bf16_32x32(" in text
    assert "linalg.matmul" not in text


def _dot(m: int, k: int, n: int, batch: int = 0) -> str:
    lead = f"{batch}x" if batch else ""
    dims = "batching_dims = [0] x [0], contracting_dims = [2] x [1]" if batch else "contracting_dims = [1] x [0]"
    a, b, c = f"tensor<{lead}{m}x{k}xbf16>", f"tensor<{lead}{k}x{n}xbf16>", f"tensor<{lead}{m}x{n}xf32>"
    return (f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, {dims} : ({a}, {b}) -> {c}\n"
            f"  return %0 : {c}\n}}")


@pytest.mark.skipif(not _HOST_AMX, reason="this host has no AMX")
@pytest.mark.parametrize("m, k, n, batch", [(256, 512, 256, 0), (200, 1000, 100, 0), (100, 70, 50, 3),
                                             (96, 128, 256, 2), (256, 128, 1024, 0), (288, 96, 1024, 0)])
def test_amx_matmul_matches_f64(m, k, n, batch):
    rng = np.random.default_rng(m + k + n)
    lead = (batch,) if batch else ()
    a = rng.standard_normal(lead + (m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal(lead + (k, n)).astype(ml_dtypes.bfloat16)
    options = xlac.Options.from_env().replace(num_threads=2)
    exe = xlac.compile(_dot(m, k, n, batch), cache=False, options=options)
    if not uses_amx(cpu_model("host"), options.micro_kernels):
        pytest.skip("the micro-kernels are off, or Linux refused the tile state")
    llvm = exe.as_text("llvm")
    assert "xlac_ukernel_amx_bf16_32x32" in llvm
    # A packed in the thread loop where a group of 8 chunks or more reads it (operands padded to 32)
    chunks, blocks = -(-n // 32), -(-(-(-m // 32) * 32) // 256)
    assert ("_pack_a" in llvm) == amx_pack.packs(amx_pack.per_group(chunks, max(batch, 1) * blocks, 2))
    got = np.asarray(exe(a, b))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    expected = a64 @ b64
    # f32 sums of exact products: k * 2^-24 * sum |a||b| bounds the error
    bound = k * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64))
    assert np.all(np.abs(got - expected) <= bound + 1e-30)


def _chain(shapes: list[tuple[int, ...]], epilogue: bool) -> str:
    """x @ w1 (@ w2 ...), each dot's f32 C then, with ``epilogue``, max(C, 0)
    rounded to bf16 (the last one too), else C itself (one dot)."""
    batch = len(shapes[0]) == 3
    dims = "batching_dims = [0] x [0], contracting_dims = [2] x [1]" if batch else "contracting_dims = [1] x [0]"
    t = lambda shape, e: f"tensor<{'x'.join(map(str, shape))}x{e}>"   # noqa: E731
    args = ", ".join(f"%w{i}: {t(s, 'bf16')}" for i, s in enumerate(shapes))
    lines, x, lead = [], "%w0", shapes[0][:-2]
    for i, w in enumerate(shapes[1:], 1):
        c = (*lead, shapes[0][-2], w[-1])
        lines.append(f"  %c{i} = stablehlo.dot_general {x}, %w{i}, {dims} : "
                     f"({t((*lead, shapes[0][-2], w[-2]), 'bf16')}, {t(w, 'bf16')}) -> {t(c, 'f32')}")
        if not epilogue:
            return f"func.func @main({args}) -> {t(c, 'f32')} {{\n" + "\n".join(lines) + \
                f"\n  return %c{i} : {t(c, 'f32')}\n}}"
        lines += [f"  %z{i} = stablehlo.constant dense<0.0> : {t(c, 'f32')}",
                  f"  %r{i} = stablehlo.maximum %c{i}, %z{i} : {t(c, 'f32')}",
                  f"  %x{i} = stablehlo.convert %r{i} : ({t(c, 'f32')}) -> {t(c, 'bf16')}"]
        x = f"%x{i}"
    return f"func.func @main({args}) -> {t(c, 'bf16')} {{\n" + "\n".join(lines) + \
        f"\n  return {x} : {t(c, 'bf16')}\n}}"


@pytest.mark.skipif(not _HOST_AMX, reason="this host has no AMX")
@pytest.mark.parametrize("shapes", [[(2, 64, 128), (2, 128, 96)], [(64, 128), (128, 128), (128, 128)]])
def test_epilogue_in_the_chunks_is_the_separate_one_bit_for_bit(shapes):
    """ReLU and the rounding to bf16 run in the AMX chunks (after a batch
    matmul's too), or after the matmul where the next dot's A is their
    output: bitwise the same as on the f32 result of the dot alone."""
    rng = np.random.default_rng(len(shapes))
    arrays = [rng.standard_normal(s).astype(ml_dtypes.bfloat16) for s in shapes]
    fused = xlac.compile(_chain(shapes, epilogue=True), cache=False)
    if not uses_amx(cpu_model("host"), xlac.Options.from_env().micro_kernels):
        pytest.skip("the micro-kernels are off, or Linux refused the tile state")
    assert "_epilogue" in fused.as_text("llvm")
    dot = {}
    x = arrays[0]
    for w in arrays[1:]:
        if w.shape not in dot:
            dot[w.shape] = xlac.compile(_chain([x.shape, w.shape], epilogue=False), cache=False)
        x = np.maximum(np.asarray(dot[w.shape](x, w)), 0).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(np.asarray(fused(*arrays)).view(np.uint16), x.view(np.uint16))




@pytest.mark.skipif(not _HOST_AMX, reason="this host has no AMX")
def test_epilogue_writing_the_next_dots_packed_a_is_bitwise_the_same():
    """The first dot's ReLU-and-round writes the second dot's A (a temporary)
    in the packed tile order, which the second reads in place
    (xlac.passes.cpu.amx_handoff): bitwise the dots compiled one by one."""
    rng = np.random.default_rng(7)
    x, w1, w2 = [rng.standard_normal(s).astype(ml_dtypes.bfloat16) for s in [(64, 256), (256, 512), (512, 512)]]
    options = xlac.Options.from_env().replace(num_threads=2)       # groups of 8 chunks: A packed
    fused = xlac.compile(BF16_MLP_F32_SUMS, cache=False, options=options)
    if not uses_amx(cpu_model("host"), options.micro_kernels):
        pytest.skip("the micro-kernels are off, or Linux refused the tile state")
    packers = set(re.findall(r"@(xla_amx_matmul_\w*_pack_a)\(", fused.as_text("llvm")))
    assert len(packers) == 1                           # the first dot's; the second reads A in place
    first = xlac.compile(_chain([x.shape, w1.shape], epilogue=False), cache=False, options=options)
    second = xlac.compile(_chain([x.shape[:1] + w1.shape[1:], w2.shape], epilogue=False), cache=False,
                          options=options)
    h = np.maximum(np.asarray(first(x, w1)), 0).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(np.asarray(fused(x, w1, w2)).view(np.uint32),
                                  np.asarray(second(h, w2)).view(np.uint32))


@pytest.mark.skipif(not _HOST_AMX, reason="this host has no AMX")
def test_kernel_k_blocks_are_the_one_block_calls_bit_for_bit(tmp_path):
    """k over several of the kernel's k blocks (partial sums between them, the
    next block's panel packed beside the tiles, a short last block), A as it
    is (lda = k), C 64 wide and accumulated into: bitwise the same as one
    call per k block, each accumulating into the last's C."""
    import ctypes

    from xlac.targets.cpu import micro_kernels
    if not amx_kernels.request_tile_state():
        pytest.skip("Linux refused the tile state")
    path = micro_kernels.shared_library(amx_kernels.SYMBOL, cpu_model("host").features, tmp_path)
    kernel = getattr(ctypes.CDLL(str(path)), amx_kernels.SYMBOL)
    kernel.argtypes, kernel.restype = [ctypes.c_int64] * 9, None
    rows, k, kb = 96, 3 * amx_kernels.KB + 32, amx_kernels.KB
    rng = np.random.default_rng(7)
    a = rng.standard_normal((rows, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, 64)).astype(ml_dtypes.bfloat16)
    start = rng.standard_normal((rows, 64)).astype(np.float32)
    whole, blocks = start.copy(), start.copy()
    at = lambda x, i=0, j=0: x.ctypes.data + x.itemsize * (i * x.shape[1] + j)   # noqa: E731
    kernel(at(whole), 64, at(a), k, at(b), 64, k, rows, 1)
    for k0 in range(0, k, kb):
        kernel(at(blocks), 64, at(a, 0, k0), k, at(b, k0), 64, min(kb, k - k0), rows, 1)
    np.testing.assert_array_equal(whole.view(np.uint32), blocks.view(np.uint32))
    np.testing.assert_array_equal(whole[:, 32:], start[:, 32:])
    assert not np.array_equal(whole[:, :32], start[:, :32])
