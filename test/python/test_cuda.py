"""The CUDA target without a GPU: PTX for every bench program accepted by
ptxas, the launch path against a fake driver; real-GPU checks skip with a reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

import xlac  # noqa: E402
from xlac.cuda_ptx import ptxas, wheel_file  # noqa: E402
from xlac.runtime.cuda import CudaUnavailable  # noqa: E402
from xlac.runtime.fake_cuda import FakeDriver  # noqa: E402

SUITE = Path("/work/shared/bench/suite")
BENCH = sorted(SUITE.glob("*.stablehlo.mlir"))
needs_ptxas = pytest.mark.skipif(wheel_file("bin/ptxas") is None,
                                 reason="ptxas not installed: pip install 'xlac[cuda]'")

ADD_EXP = """
func.func @main(%a: tensor<100x77xf32>, %b: tensor<100x77xf32>) -> tensor<100x77xf32> {
  %0 = stablehlo.add %a, %b : tensor<100x77xf32>
  %1 = stablehlo.exponential %0 : tensor<100x77xf32>
  return %1 : tensor<100x77xf32>
}"""

FULL_SUM = """
func.func @main(%a: tensor<1000xf32>) -> tensor<f32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0]
      : (tensor<1000xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""

# literals LLVM 22 cannot read as LLVM 24 prints them: inf, 0.1f, f16/bf16, NaN
LITERALS = """
func.func @main(%a: tensor<8xf32>, %h: tensor<8xf16>, %b: tensor<8xbf16>) -> (tensor<8xi1>, tensor<8xf32>, tensor<8xf16>, tensor<8xbf16>) {
  %fin = stablehlo.is_finite %a : (tensor<8xf32>) -> tensor<8xi1>
  %c = stablehlo.constant dense<0.1> : tensor<8xf32>
  %nan = stablehlo.constant dense<0x7FC00001> : tensor<8xf32>
  %x = stablehlo.multiply %a, %c : tensor<8xf32>
  %y = stablehlo.maximum %x, %nan : tensor<8xf32>
  %hc = stablehlo.constant dense<0.1> : tensor<8xf16>
  %hy = stablehlo.tanh %h : tensor<8xf16>
  %hz = stablehlo.add %hy, %hc : tensor<8xf16>
  %bc = stablehlo.constant dense<0.3> : tensor<8xbf16>
  %bz = stablehlo.multiply %b, %bc : tensor<8xbf16>
  return %fin, %y, %hz, %bz : tensor<8xi1>, tensor<8xf32>, tensor<8xf16>, tensor<8xbf16>
}"""


@needs_ptxas
@pytest.mark.parametrize("path", BENCH, ids=lambda p: p.name.split(".")[0])
def test_bench_program_ptx_passes_ptxas(path):
    ptx = xlac.compile(path.read_text(), target="cuda").as_text("ptx")
    assert ".target sm_90" in ptx
    ptxas(ptx)


@needs_ptxas
@pytest.mark.parametrize("program", [ADD_EXP, FULL_SUM, LITERALS], ids=["add_exp", "full_sum", "literals"])
def test_small_program_ptx_passes_ptxas(program):
    ptx = xlac.compile(program, target="cuda").as_text("ptx")
    assert "__nv_" not in ptx and "call" not in ptx.split(".entry", 1)[1]   # libdevice linked and inlined
    ptxas(ptx)


def test_full_reduction_runs_on_the_device_not_the_host():
    exe = xlac.compile(FULL_SUM, target="cuda")
    launches = [s for s in exe._function.steps if type(s).__name__ == "Launch"]
    assert [(s.grid, s.block) for s in launches] == [((1, 1, 1), (1, 1, 1))]


def test_launch_path_against_fake_driver():
    exe = xlac.compile(ADD_EXP, target="cuda")
    fake = FakeDriver()
    exe._function._driver = fake
    a = np.arange(7700, dtype=np.float32).reshape(100, 77)
    (out,) = exe.run(a, a)
    assert out.shape == (100, 77)                     # the fake runs no kernels: output is the zeroed buffer
    (name, grid, block, words), = fake.launches
    assert f".entry {name}(" in exe.as_text("ptx")
    assert np.prod(grid) * np.prod(block) >= 7700
    pointers = [w for w in words if w > 1 << 20]
    assert len(pointers) == 3 and fake.freed == 3 and not fake.memory   # 2 inputs + 1 output, all freed


def test_run_without_gpu_is_a_clear_error():
    exe = xlac.compile(ADD_EXP, target="cuda")
    a = np.ones((100, 77), np.float32)
    try:
        result = exe.run(a, a)
    except CudaUnavailable as error:
        assert "no CUDA driver" in str(error) or "cuInit" in str(error)
        pytest.skip(str(error))
    np.testing.assert_allclose(result[0], np.exp(a + a), rtol=1e-6)    # on a GPU machine


def test_unknown_stage_lists_cuda_stages():
    exe = xlac.compile(ADD_EXP, target="cuda")
    assert exe.stages[-2:] == ["gpu", "ptx"]
    with pytest.raises(xlac.CompileError, match="stages: .*ptx"):
        exe.as_text("bufferized")


def test_unlowerable_kernel_is_a_compile_error_not_a_crash():
    # complex math is not lowered to NVVM yet; the translation would abort the process
    text = ("func.func @main(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {\n"
            "  %0 = stablehlo.exponential %x : tensor<4xcomplex<f32>>\n"
            "  return %0 : tensor<4xcomplex<f32>>\n}")
    with pytest.raises(xlac.CompileError, match="not supported on cuda"):
        xlac.compile(text, target="cuda")
