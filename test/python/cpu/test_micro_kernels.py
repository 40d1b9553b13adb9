"""Matmul register tiles as calls of micro-kernels built once per machine
(xla-micro-kernel-calls, xlac.targets.cpu.micro_kernels): the same results bit
for bit as the tiles compiled into the program, the kernels built once and
reused by other processes, and artifacts that run without them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xlac
import xlac.cache
from conftest import runnable_levels
from xlac.targets.cpu import micro_kernels


def _dot(m: int, k: int, n: int, batch: int = 0) -> str:
    lead = f"{batch}x" if batch else ""
    dims = "batching_dims = [0] x [0], contracting_dims = [2] x [1]" if batch else \
        "contracting_dims = [1] x [0]"
    a, b, c = f"tensor<{lead}{m}x{k}xf32>", f"tensor<{lead}{k}x{n}xf32>", f"tensor<{lead}{m}x{n}xf32>"
    return (f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, {dims} : ({a}, {b}) -> {c}\n"
            f"  return %0 : {c}\n}}")


def _inputs(m: int, k: int, n: int, batch: int = 0):
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    lead = (batch,) if batch else ()
    return (rng.standard_normal(lead + (m, k), dtype=np.float32),
            rng.standard_normal(lead + (k, n), dtype=np.float32))


def _options(on: bool, cpu: str = "host") -> xlac.Options:
    return xlac.Options.from_env().replace(micro_kernels=on, cpu=cpu)


# (m, k, n, batch): the packed blocks (1024 / 256 deep), rows peeled (197), a
# short k whose tiles start at zero (128), one too short for a call (64), k not a
# multiple of the block (513), columns no tile divides (40: the edge tiles stay
# compiled in), batches
SHAPES = [(256, 512, 256, 0), (197, 300, 64, 0), (64, 128, 64, 0), (64, 64, 64, 0),
          (100, 513, 48, 0), (30, 200, 40, 0), (4, 160, 48, 80), (3, 149, 37, 30),
          (8, 128, 96, 32)]


@pytest.mark.parametrize("m, k, n, batch", SHAPES)
def test_results_bit_identical_with_and_without_micro_kernels(m, k, n, batch):
    text = _dot(m, k, n, batch)
    a, b = _inputs(m, k, n, batch)
    with_kernels = xlac.compile(text, options=_options(True), cache=False)
    without = xlac.compile(text, options=_options(False), cache=False)
    assert "xlac_ukernel_f32_" not in without.as_text("llvm")
    got, expected = np.asarray(with_kernels(a, b)), np.asarray(without(a, b))
    assert got.tobytes() == expected.tobytes()
    np.testing.assert_allclose(got, a @ b, rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("m, k, n, batch, tile", [(1024, 1024, 1024, 0, "6x16"),
                                                  (197, 300, 64, 0, "6x16"),
                                                  (64, 128, 64, 0, "4x16"),
                                                  (4, 160, 48, 80, "4x16")])
def test_matmul_program_calls_the_micro_kernel(m, k, n, batch, tile):
    """On AVX2 the 6 x 16 tile (the planner's, contraction_plan.register_tile)."""
    text = _dot(m, k, n, batch)
    llvm = xlac.compile(text, options=_options(True, "x86-64-v3"), cache=False).as_text("llvm")
    assert f"llvm.call @xlac_ukernel_f32_{tile}(" in llvm
    # the program's own FMAs: the edge tiles' at most
    own = xlac.compile(text, options=_options(False, "x86-64-v3"), cache=False).as_text("llvm")
    assert llvm.count("llvm.intr.fmuladd") < own.count("llvm.intr.fmuladd")


def test_avx512_code_calls_its_8x32_kernel_built_for_avx512():
    text = _dot(256, 256, 256)
    exe = xlac.compile(text, options=_options(True, "x86-64-v4"), cache=False)
    assert "llvm.call @xlac_ukernel_f32_8x32(" in exe.as_text("llvm")
    blob = exe.serialize()                          # linked: the kernel's object was built
    assert len(blob) > 0
    objdump = shutil.which("objdump")
    if objdump is not None:
        path = micro_kernels.object_path("xlac_ukernel_f32_8x32",
                                         xlac.cpu_model.cpu_model("x86-64-v4").features,
                                         xlac.Options.from_env().cache_dir)
        listing = subprocess.run([objdump, "-d", str(path)], capture_output=True, text=True).stdout
        assert "zmm" in listing and "vfmadd" in listing
    if "x86-64-v4" in runnable_levels("x86-64-v4"):
        a, b = _inputs(256, 256, 256)
        np.testing.assert_allclose(exe(a, b), a @ b, rtol=2e-5, atol=2e-4)


def test_sse_level_has_no_micro_kernel_and_still_runs():
    text = _dot(64, 64, 64)
    exe = xlac.compile(text, options=_options(True, "x86-64-v2"), cache=False)
    assert "xlac_ukernel" not in exe.as_text("llvm")
    a, b = _inputs(64, 64, 64)
    np.testing.assert_allclose(exe(a, b), a @ b, rtol=2e-5, atol=2e-4)


_COMPILE_IN_FRESH_PROCESS = textwrap.dedent("""
    import sys, numpy as np, xlac
    from xlac.targets.cpu import micro_kernels
    m, k, n = map(int, sys.argv[2:5])
    exe = xlac.compile(sys.argv[1], options=xlac.Options.from_env().replace(pieces=False, cpu="x86-64-v3"))
    a = np.ones((m, k), np.float32); b = np.ones((k, n), np.float32)
    assert (np.asarray(exe(a, b)) == k).all()
    print(",".join(micro_kernels.BUILT))
""")


def _compile_elsewhere(m: int, k: int, n: int, cache_dir) -> str:
    """In a fresh process sharing ``cache_dir``, an m x k x n matmul compiled and
    run; the micro-kernels that process built."""
    env = dict(os.environ, XLAC_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", _COMPILE_IN_FRESH_PROCESS, _dot(m, k, n),
                           str(m), str(k), str(n)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_kernels_are_built_once_and_reused_by_other_processes(tmp_path):
    built = _compile_elsewhere(96, 128, 48, tmp_path)
    assert built.startswith("xlac_ukernel_f32_6x16")       # and, for the JIT, its library
    kept = sorted(p.name for p in (tmp_path / "micro-kernels").iterdir())
    assert any(name.endswith(".o") for name in kept) and any(name.endswith(".so") for name in kept)
    # another program of the same tile, in another process: nothing built again
    assert _compile_elsewhere(96, 256, 48, tmp_path) == ""
    assert sorted(p.name for p in (tmp_path / "micro-kernels").iterdir()) == kept


_LOAD_IN_FRESH_PROCESS = textwrap.dedent("""
    import sys, numpy as np, xlac
    exe = xlac.deserialize(open(sys.argv[1], "rb").read())
    a = np.ones((197, 300), np.float32); b = np.ones((300, 64), np.float32)
    assert (np.asarray(exe(a, b)) == 300).all()
""")


def test_artifact_runs_without_the_micro_kernel_directory(tmp_path):
    cache = tmp_path / "cache"
    exe = xlac.compile(_dot(197, 300, 64), options=_options(True).replace(cache_dir=cache))
    assert "xlac_ukernel_f32_" in exe.as_text("llvm")
    assert any((cache / "micro-kernels").iterdir())     # the kernels are kept with the cache
    artifact = tmp_path / "matmul.xlac"
    artifact.write_bytes(exe.serialize())
    xlac.cache.flush()                                 # the writer thread is done with it
    shutil.rmtree(cache)                               # no cache, no kernels left
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "empty"))
    done = subprocess.run([sys.executable, "-c", _LOAD_IN_FRESH_PROCESS, str(artifact)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "empty" / "micro-kernels").exists()


def _convolution(n: int, h: int, w: int, c: int, f: int, stride: int, pad: int) -> tuple[str, tuple]:
    """An NHWC x HWIO 3 x 3 convolution; its input and filter shapes."""
    oh, ow = (h + 2 * pad - 3) // stride + 1, (w + 2 * pad - 3) // stride + 1
    x, k, y = f"tensor<{n}x{h}x{w}x{c}xf32>", f"tensor<3x3x{c}x{f}xf32>", f"tensor<{n}x{oh}x{ow}x{f}xf32>"
    text = (f"func.func @main(%x: {x}, %w: {k}) -> {y} {{\n"
            f"  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            f"window = {{stride = [{stride}, {stride}], pad = [[{pad}, {pad}], [{pad}, {pad}]]}} "
            "{batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
            f" : ({x}, {k}) -> {y}\n  return %0 : {y}\n}}")
    return text, ((n, h, w, c), (3, 3, c, f))


# ResNet's 3 x 3 layers (28 x 28 x 128; the stride-2 14 x 14 x 128), no padding,
# strides 2 with 7-row tiles, 64 channels and fewer (too few for a call)
@pytest.mark.parametrize("n, h, w, c, f, stride, pad", [(2, 28, 28, 128, 128, 1, 1),
                                                        (2, 14, 14, 128, 256, 2, 1),
                                                        (2, 30, 30, 128, 64, 1, 0),
                                                        (2, 15, 15, 128, 16, 2, 0),
                                                        (2, 56, 56, 64, 64, 1, 1),
                                                        (2, 9, 9, 16, 24, 1, 1)])
def test_convolution_results_bit_identical_with_and_without(n, h, w, c, f, stride, pad):
    text, shapes = _convolution(n, h, w, c, f, stride, pad)
    rng = np.random.default_rng(c + f)
    x, k = (rng.standard_normal(s, dtype=np.float32) for s in shapes)
    with_kernels = xlac.compile(text, options=_options(True), cache=False)
    without = xlac.compile(text, options=_options(False), cache=False)
    assert np.asarray(with_kernels(x, k)).tobytes() == np.asarray(without(x, k)).tobytes()


@pytest.mark.parametrize("layer, tile", [((2, 28, 28, 128, 128, 1, 1), "2x32"),
                                         ((2, 14, 14, 128, 256, 2, 1), "7x16")])
def test_resnet_layer_convolution_calls_the_micro_kernel(layer, tile):
    """A 3 x 3 layer's tile loop over input channels (8 at a time) is one call
    per filter tap (the schedule's 2 x 32 tile on AVX2); the stride-2 layer's
    7-pixel rows, in AVX2's register-tight 7 x 16 tile, too. (With 64 channels
    it stays compiled in.)"""
    text, _ = _convolution(*layer)
    llvm = xlac.compile(text, options=_options(True, "x86-64-v3"), cache=False).as_text("llvm")
    assert f"llvm.call @xlac_ukernel_f32_{tile}(" in llvm


def test_avx2_seven_by_sixteen_kernel_reads_b_from_memory_and_matches():
    """AVX2's 7 x 16 tile would need 17 registers: its kernel reads B's second
    vector from memory in every row's FMA (volatile loads: not one register),
    and a 7-pixel-row convolution through it is bit-identical to the tile
    compiled in."""
    assert micro_kernels.mlir_text(7, 16, lanes=8).count("llvm.load volatile") == 7
    assert "volatile" not in micro_kernels.mlir_text(6, 16, lanes=8)
    assert "volatile" not in micro_kernels.mlir_text(7, 16)
    text, shapes = _convolution(2, 7, 7, 128, 32, 1, 1)
    rng = np.random.default_rng(7)
    x, k = (rng.standard_normal(s, dtype=np.float32) for s in shapes)
    with_kernels = xlac.compile(text, options=_options(True, "x86-64-v3"), cache=False)
    assert "llvm.call @xlac_ukernel_f32_7x16(" in with_kernels.as_text("llvm")
    without = xlac.compile(text, options=_options(False, "x86-64-v3"), cache=False)
    assert np.asarray(with_kernels(x, k)).tobytes() == np.asarray(without(x, k)).tobytes()


def test_stream_kernel_text_stores_c_non_temporally_where_aligned():
    assert micro_kernels.symbol(8, 32, stream=True) == "xlac_ukernel_f32_8x32_nt"
    assert micro_kernels.tile_of("xlac_ukernel_f32_8x32_nt") == (8, 32)
    assert micro_kernels.streams("xlac_ukernel_f32_8x32_nt") and not micro_kernels.streams("xlac_ukernel_f32_8x32")
    text = micro_kernels.mlir_text(6, 16, stream=True)
    assert text.count("nontemporal") == 6 and "scf.if %aligned" in text
    assert "nontemporal" not in micro_kernels.mlir_text(6, 16)


def test_large_result_written_once_is_streamed_and_starts_on_a_cache_line():
    """An LM head (x . W^T, W [n, k]) whose 4.5 MiB result is written once from
    zeros in registers: the _nt kernel, an sfence, a 64-byte aligned output."""
    a_type, w_type, c_type = "tensor<2x128x128xf32>", "tensor<4608x128xf32>", "tensor<2x128x4608xf32>"
    text = (f"func.func @main(%x: {a_type}, %w: {w_type}) -> {c_type} {{\n"
            f"  %0 = stablehlo.dot_general %x, %w, contracting_dims = [2] x [1] : ({a_type}, {w_type}) -> {c_type}\n"
            f"  return %0 : {c_type}\n}}")
    exe = xlac.compile(text, options=_options(True, "x86-64-v3"), cache=False)
    llvm = exe.as_text("llvm")
    assert "llvm.call @xlac_ukernel_f32_6x16_nt(" in llvm and "sfence" in llvm
    if "x86-64-v3" not in runnable_levels("x86-64-v3"):
        pytest.skip("this CPU cannot run x86-64-v3 code (compiled: checked)")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 128, 128), dtype=np.float32), rng.standard_normal((4608, 128), dtype=np.float32)
    got = np.asarray(exe(x, w))
    assert got.ctypes.data % 64 == 0
    np.testing.assert_allclose(got, x @ w.T, rtol=2e-5, atol=5e-4)
