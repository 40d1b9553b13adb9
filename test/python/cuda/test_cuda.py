"""The CUDA target without a GPU: PTX for every bench program accepted by
ptxas, the launch path against a fake driver; real-GPU checks skip with a reason."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

import xlac  # noqa: E402
from conftest import SUITE, require_shared  # noqa: E402
from xlac.targets.cuda.ptx import ptxas, wheel_file  # noqa: E402
from xlac.targets.cuda.runtime import CudaUnavailable  # noqa: E402
from xlac_emulator.fake_cuda import FakeDriver  # noqa: E402

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

# constants (memref.global), a host-loaded clamped index, an offset view,
# complex math and a subview inside a kernel (scatter's update window)
CONST_ADD = """
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]> : tensor<2x3xf32>
  %0 = stablehlo.add %a, %c : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}"""

DYNAMIC_SLICE = """
func.func @main(%x: tensor<3xf32>, %i: tensor<i64>) -> tensor<1xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<3xf32>, tensor<i64>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}"""

SLICE = """
func.func @main(%x: tensor<3xbf16>) -> tensor<1xbf16> {
  %0 = stablehlo.slice %x [1:2] : (tensor<3xbf16>) -> tensor<1xbf16>
  return %0 : tensor<1xbf16>
}"""

COMPLEX_LOG = """
func.func @main(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = stablehlo.log %x : tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}"""

SCATTER_F16 = """
func.func @main(%a: tensor<1xf16>, %b: tensor<2xf16>) -> tensor<1xf16> {
  %c = stablehlo.constant dense<0> : tensor<2x1xi64>
  %0 = "stablehlo.scatter"(%a, %c, %b) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%x: tensor<f16>, %y: tensor<f16>):
    %1 = stablehlo.add %x, %y : tensor<f16>
    stablehlo.return %1 : tensor<f16>
  }) : (tensor<1xf16>, tensor<2x1xi64>, tensor<2xf16>) -> tensor<1xf16>
  return %0 : tensor<1xf16>
}"""

COMPLEX_CONST = """
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %s = stablehlo.constant dense<(1.5, 2.5)> : tensor<2xcomplex<f32>>
  %c = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>
  %0 = stablehlo.multiply %x, %s : tensor<2xcomplex<f32>>
  %1 = stablehlo.add %0, %c : tensor<2xcomplex<f32>>
  return %1 : tensor<2xcomplex<f32>>
}"""

BF16_CONST = """
func.func @main(%x: tensor<3xbf16>) -> tensor<3xbf16> {
  %c = stablehlo.constant dense<[1.0, 0x7FC0, -2.5]> : tensor<3xbf16>
  %0 = stablehlo.add %x, %c : tensor<3xbf16>
  return %0 : tensor<3xbf16>
}"""


def _steps(exe, kind: str) -> list:
    return [s for s in exe.function.steps if type(s).__name__ == kind]


class RecordingFake(FakeDriver):
    """The fake driver, also keeping what each upload wrote."""

    def __init__(self):
        super().__init__()
        self.uploads: dict[int, bytes] = {}
        self.upload_log: list[bytes] = []

    def to_device(self, pointer: int, host: int, nbytes: int) -> None:
        super().to_device(pointer, host, nbytes)
        self.uploads[pointer] = self.memory[pointer][:nbytes].tobytes()
        self.upload_log.append(self.uploads[pointer])


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


@needs_ptxas
@pytest.mark.parametrize("program", [CONST_ADD, DYNAMIC_SLICE, SLICE, COMPLEX_LOG, SCATTER_F16,
                                     COMPLEX_CONST, BF16_CONST],
                         ids=["constant", "dynamic_slice", "slice", "complex_log", "scatter_f16",
                              "complex_constant", "bf16_constant"])
def test_more_programs_ptx_passes_ptxas(program):
    ptxas(xlac.compile(program, target="cuda").as_text("ptx"))


def test_constant_is_uploaded_and_passed_to_the_kernel():
    exe = xlac.compile(CONST_ADD, target="cuda")
    (const,) = _steps(exe, "Const")
    expected = np.array([[1, 2, 3], [4, 5, 6.5]], np.float32)
    np.testing.assert_array_equal(np.frombuffer(const.data, np.float32), expected.ravel())
    fake = RecordingFake()
    exe.function._driver = fake
    exe.run(np.zeros((2, 3), np.float32))
    (_, _, _, words), = fake.launches
    assert any(fake.uploads.get(w) == const.data for w in words)   # the kernel gets the device copy
    exe.run(np.zeros((2, 3), np.float32))
    assert fake.upload_log.count(const.data) == 1                   # the constant stays on the device
    exe.function.close()
    assert fake.freed == 3 and not fake.memory                      # input, constant, output


@pytest.mark.parametrize("program, expected", [
    (COMPLEX_CONST, np.array([1 + 2j, 3 - 4j], np.complex64)),
    (BF16_CONST, np.array([1.0, np.nan, -2.5], ml_dtypes.bfloat16)),
], ids=["complex", "bf16"])
def test_constants_numpy_cannot_read_are_uploaded_bit_exact(program, expected):
    (const,) = _steps(xlac.compile(program, target="cuda"), "Const")
    assert const.data == expected.tobytes()


def test_dynamic_slice_index_is_read_on_the_device():
    exe = xlac.compile(DYNAMIC_SLICE, target="cuda")
    assert not _steps(exe, "Copy")                     # a DtoD copy would ignore the clamped offset
    assert [(s.grid, s.block) for s in _steps(exe, "Launch")] == [((1, 1, 1), (1, 1, 1))]


def test_offset_slice_is_a_kernel_not_a_copy():
    exe = xlac.compile(SLICE, target="cuda")
    assert not _steps(exe, "Copy") and len(_steps(exe, "Launch")) == 1


def test_full_reduction_runs_on_the_device_not_the_host():
    exe = xlac.compile(FULL_SUM, target="cuda")
    launches = [s for s in exe.function.steps if type(s).__name__ == "Launch"]
    # one block of 256 threads folding the 1000 elements (shuffles + shared memory), starting
    # from the init value (its fill kernel is folded in)
    assert [(s.grid, s.block) for s in launches] == [((1, 1, 1), (256, 1, 1))]
    assert "shfl.sync.bfly" in exe.as_text("ptx") and ".shared" in exe.as_text("ptx")


# program -> (kernels, fusion groups of its report). Attention's Q.K^T reads K as it
# lies (no transpose kernel); the MLP's bias + relu write their matmul's C
# (xla-gpu-epilogue-in-place), so each runs in its matmul's kernel; the transformer
# block's per-head matmuls read strided views. Apart still: the transposes that move
# its heads dim in front before the batched matmuls. Softmax's and layer norm's fusions
# over one row are one kernel (a block per row, row_chains.py)
KERNELS = {"softmax": (1, 3), "layernorm": (1, 4), "attention": (3, 5), "mlp": (2, 2),
           "transformer_block": (14, 17)}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernels_per_fusion(name):
    """Softmax's and layer norm's fusions over a row are one kernel that reads the
    row once; a matmul's zero fill and its bias + activation are in its kernel."""
    path = require_shared("bench", "suite", f"{name}.stablehlo.mlir")
    exe = xlac.compile(path, target="cuda")
    head = exe.fusion_report().splitlines()[0]            # "N fusion(s), M op(s) left as ..."
    launches = len([s for s in exe.function.steps if type(s).__name__ == "Launch"])
    assert (launches, int(head.split()[0]) + int(head.split()[2])) == KERNELS[name], head


def test_launch_path_against_fake_driver():
    exe = xlac.compile(ADD_EXP, target="cuda")
    fake = FakeDriver()
    exe.function._driver = fake
    a = np.arange(7700, dtype=np.float32).reshape(100, 77)
    (out,) = exe.run(a, a)
    assert out.shape == (100, 77)                     # the fake runs no kernels: output is the zeroed buffer
    (name, grid, block, words), = fake.launches
    assert f".entry {name}(" in exe.as_text("ptx")
    assert np.prod(grid) * np.prod(block) >= 7700
    pointers = [w for w in words if w > 1 << 20]
    assert len(pointers) == 3 and all(fake.is_device_pointer(p) for p in pointers)
    exe.run(a, a)                                     # buffers are kept: no new allocation
    assert len(fake.memory) == 3 and fake.freed == 0
    exe.function.close()
    assert fake.freed == 3 and not fake.memory        # 2 inputs + 1 output, all freed


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


def test_unsupported_program_is_a_compile_error_not_a_crash():
    # LAPACK calls run on the CPU only (data-dependent loops run: test_cuda_control_flow.py)
    text = """
func.func @main(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}}
      : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}"""
    with pytest.raises(xlac.CompileError, match="not supported on cuda"):
        xlac.compile(text, target="cuda")


def test_dumps_and_timings_work_for_cuda(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAC_DUMP_TO", str(tmp_path))
    xlac.compile(FULL_SUM, target="cuda")
    (directory,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    names = sorted(p.name for p in directory.iterdir())
    assert any(n.endswith("_xla-gpu-kernels.mlir") for n in names), names
    kernels = next(directory.glob("*_xla-gpu-kernels.mlir")).read_text()
    assert "gpu.launch" in kernels and "gpu.shuffle xor" in kernels
    assert "ptx (llvmlite NVPTX -O3)" in (directory / "timing.txt").read_text()


def test_cuda_programs_are_cached(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("XLAC_CACHE_DIR", str(tmp_path))
    first = xlac.compile(FULL_SUM, target="cuda")
    from xlac import cache
    cache.flush()
    entries = list(tmp_path.glob("*.xlac"))   # one entry under the program's and the input's keys
    assert entries
    from xlac.frontend import parse
    monkeypatch.setattr(parse, "parse_module", lambda *a: pytest.fail("a hit parsed"))
    hit = xlac.compile(FULL_SUM, target="cuda")            # found by the input's bytes: no parse
    monkeypatch.undo()
    monkeypatch.setenv("XLAC_CACHE_DIR", str(tmp_path))
    assert hit.as_text("ptx") == first.as_text("ptx") and hit.signature == first.signature
    assert hit.function.steps == first.function.steps
    assert hit.as_text("kernels") == first.as_text("kernels")
    assert xlac.compile(FULL_SUM).target == "cpu"          # another target: another entry
    for entry in entries:
        entry.write_bytes(entry.read_bytes().replace(b"main_kernel", b"main_kernex"))
    with caplog.at_level("INFO", logger="xlac.cache"):
        rebuilt = xlac.compile(FULL_SUM, target="cuda")
    assert "checksum mismatch" in caplog.text and rebuilt.as_text("ptx") == first.as_text("ptx")


def test_cached_cuda_program_runs_like_a_fresh_one():
    from xlac_emulator.simt import run_emulated
    exe = xlac.compile(CONST_ADD, target="cuda")
    again = xlac.deserialize(exe.serialize(), target="cuda")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(run_emulated(again, x)[0], run_emulated(exe, x)[0])


def test_disabling_the_kernel_passes_falls_back_to_tiled_loops(monkeypatch):
    from xlac_emulator.simt import run_emulated
    monkeypatch.setenv("XLAC_DISABLE_PASSES", "xla-gpu-kernels,xla-gpu-matmul-kernels")
    exe = xlac.compile(FULL_SUM, target="cuda")
    launches = [s for s in exe.function.steps if type(s).__name__ == "Launch"]
    assert "gpu.shuffle" not in exe.as_text("kernels") and launches
    x = np.linspace(0, 1, 1000, dtype=np.float32)
    np.testing.assert_allclose(run_emulated(exe, x)[0], x.sum(dtype=np.float64), rtol=1e-5)
