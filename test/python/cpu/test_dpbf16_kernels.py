"""bf16 x bf16 -> f32 matmuls on the AVX512-BF16 micro-kernel
(xlac.targets.cpu.dpbf16_kernels) on CPUs without AMX: chosen by the CPU's
features, xla-amx-calls calling it, the kernel compiled for an AVX512-BF16
target anywhere, and (where this host has AVX512-BF16) results against f64
numpy within the bound of f32 sums."""

from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np
import pytest
from bf16_programs import BF16_MLP_F32_SUMS

import xlac
from xlac.context import new_context
from xlac.cpu_model import CpuModel, cpu_model, host_features
from xlac.mlir import ExecutionEngine, ir
from xlac.pipeline.pass_manager import run_passes
from xlac.targets.cpu import amx_kernels, dpbf16_kernels, micro_kernels
from xlac.targets.cpu.pipeline import bf16_kernel, bufferize, lower_to_llvm

_BF16 = ("avx512f", "avx512_bf16", "fma")
_HOST_BF16 = "avx512_bf16" in host_features()         # runs the kernel (AMX or not)


def test_kernel_chosen_by_features_amx_first_dpbf16_only_without_amx(monkeypatch):
    monkeypatch.setattr(amx_kernels, "request_tile_state", lambda: True)
    assert bf16_kernel(CpuModel("host", (*_BF16, "amx_bf16", "amx_tile")), micro_kernels=True) == "amx"
    assert bf16_kernel(CpuModel("host", _BF16), micro_kernels=True) == "dpbf16"
    assert bf16_kernel(CpuModel("host", _BF16), micro_kernels=False) is None
    assert bf16_kernel(CpuModel("host", ("avx2", "fma")), micro_kernels=True) is None
    for level in ("x86-64-v2", "x86-64-v3", "x86-64-v4"):       # no level has AVX512-BF16
        assert bf16_kernel(cpu_model(level), micro_kernels=True) is None
    # Linux said no to AMX: the f32 tiles as before (vdpbf16ps is slow on AMX's CPUs)
    monkeypatch.setattr(amx_kernels, "request_tile_state", lambda: False)
    assert bf16_kernel(CpuModel("host", (*_BF16, "amx_bf16", "amx_tile")), micro_kernels=True) is None


def test_pipeline_text_names_the_kernel_only_when_not_amx():
    assert "xla-amx-calls{threads=2}" in lower_to_llvm(micro_kernels=True, threads=2)
    assert "xla-amx-calls{threads=2 kernel=dpbf16}" in lower_to_llvm(micro_kernels=True, threads=2,
                                                                     bf16_kernel="dpbf16")


_DOT_TENSORS = """
func.func @main(%a: tensor<64x96xbf16>, %b: tensor<96x64xbf16>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ea = tensor.empty() : tensor<64x96xf32>
  %wa = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x96xbf16>) outs(%ea : tensor<64x96xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<64x96xf32>
  %eb = tensor.empty() : tensor<96x64xf32>
  %wb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel"]} ins(%b : tensor<96x64xbf16>) outs(%eb : tensor<96x64xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<96x64xf32>
  %p = linalg.matmul ins(%wa, %wb : tensor<64x96xf32>, tensor<96x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %p : tensor<64x64xf32>
}
"""


def test_marked_matmul_calls_the_dpbf16_kernel():
    steps = [s for s in bufferize(threads=2, vector_bytes=64) if s != "xla-amx-contractions"]
    with new_context() as context, ir.Location.unknown(context):
        module = ir.Module.parse(_DOT_TENSORS)
        run_passes(module, ["xla-amx-contractions{min-work=1}", *steps, "xla-amx-calls{kernel=dpbf16}"])
        text = str(module)
    assert "call @xlac_ukernel_dpbf16_32x32(" in text and "func.func private @xlac_ukernel_dpbf16_32x32(" in text
    assert "amx_bf16" not in text and "linalg.matmul" not in text


@pytest.mark.parametrize("kernel, features", [(dpbf16_kernels, '"+avx512f", "+avx512bw", "+avx512bf16"'),
                                             (amx_kernels, '"+avx512f", "+amx-tile", "+amx-bf16"')])
def test_bf16_kernels_compile_for_their_target(kernel, features):
    """Anywhere: LLVM makes vdpbf16ps (AMX) code for a function whose features name AVX512-BF16 (AMX)."""
    assert compiles_for(kernel.mlir_text(), kernel.SYMBOL, features)


def compiles_for(text: str, symbol: str, features: str) -> bool:
    """Whether LLVM makes code of kernel ``symbol`` (MLIR ``text``) for a
    target of ``features`` (whatever this host has)."""
    with new_context() as context, ir.Location.unknown(context):
        module = ir.Module.parse(text)
        run_passes(module, ["convert-scf-to-cf", "convert-vector-to-llvm", "convert-arith-to-llvm",
                            "convert-func-to-llvm", "convert-cf-to-llvm", "reconcile-unrealized-casts"])
        attribute = ir.Attribute.parse(f"#llvm.target_features<[{features}]>")
        for op in module.body.operations:
            if op.operation.name == "llvm.func" and op.operation.regions[0].blocks:
                op.operation.attributes["target_features"] = attribute
        engine = ExecutionEngine(module, opt_level=2, enable_pic=True)
        return bool(engine.raw_lookup(symbol))


def _packed(a: np.ndarray) -> np.ndarray:
    """A in the AMX kernel's packed order (lda 0): per 32-row block and 32-k
    step, its two 16 x 32 tiles, 64 bytes a row."""
    m, k = a.shape
    return np.ascontiguousarray(a.reshape(m // 32, 2, 16, k // 32, 32).transpose(0, 3, 1, 2, 4)).reshape(-1)


def _bound(a64: np.ndarray, b64: np.ndarray, c) -> np.ndarray:
    """f32 sums of exact products: (k + 1) * 2^-24 * (sum |a||b| + |c|) bounds the error."""
    return (a64.shape[1] + 1) * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64) + np.abs(c))


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """The kernel built for this host, loaded (once for the module's tests)."""
    folder = tmp_path_factory.mktemp("kernels")
    path = micro_kernels.shared_library(dpbf16_kernels.SYMBOL, cpu_model("host").features, folder)
    loaded = getattr(ctypes.CDLL(str(path)), dpbf16_kernels.SYMBOL)
    loaded.argtypes, loaded.restype = [ctypes.c_int64] * 9, None
    return loaded


@pytest.mark.skipif(not _HOST_BF16, reason="this host has no AVX512-BF16")
@pytest.mark.parametrize("rows, k, packed, accumulate", [(32, 32, False, False), (64, 544, False, True),
                                                         (96, 544, True, False), (256, 288, True, True)])
def test_kernel_matches_f64(kernel, rows, k, packed, accumulate):
    """k over several of the kernel's k blocks (C holds the partial sums, a
    short last block), A as it is (lda = k) or packed (lda 0), C 64 wide
    (ldc 64: the kernel's 32 columns of it) started from zeros or accumulated into."""
    rng = np.random.default_rng(rows + k)
    a = rng.standard_normal((rows, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, 64)).astype(ml_dtypes.bfloat16)
    c = rng.standard_normal((rows, 64)).astype(np.float32)
    before = c.copy()
    a_in = _packed(a) if packed else a
    kernel(c.ctypes.data, 64, a_in.ctypes.data, 0 if packed else k, b.ctypes.data, 64, k, rows, int(accumulate))
    a64, b64 = a.astype(np.float64), b[:, :32].astype(np.float64)
    start = before[:, :32].astype(np.float64) if accumulate else 0.0
    expected = a64 @ b64 + start
    assert np.all(np.abs(c[:, :32] - expected) <= _bound(a64, b64, start) + 1e-30)
    np.testing.assert_array_equal(c[:, 32:], before[:, 32:])        # the other columns untouched




@pytest.mark.heavy                                     # two compiles: 3-8 s
@pytest.mark.skipif(not _HOST_BF16, reason="this host has no AVX512-BF16")
def test_host_mlp_on_the_kernel_matches_f64():
    """At the host level of an AVX512-BF16 CPU without AMX: both dots call the
    kernel (the first's epilogue in its chunks, the second's A packed by it)
    and the result is within the f32-sum bound of f64 (on h as xlac rounded it)."""
    options = xlac.Options.from_env().replace(num_threads=2)
    if bf16_kernel(cpu_model("host"), options.micro_kernels) != "dpbf16":
        pytest.skip("this host runs the AMX kernel, or the micro-kernels are off")
    rng = np.random.default_rng(7)
    x, w1, w2 = [rng.standard_normal(s).astype(ml_dtypes.bfloat16) for s in [(64, 256), (256, 512), (512, 512)]]
    exe = xlac.compile(BF16_MLP_F32_SUMS, cpu="host", cache=False, options=options)
    assert exe.as_text("llvm").count("call @xlac_ukernel_dpbf16_32x32(") == 2
    h = np.maximum(x.astype(np.float64) @ w1.astype(np.float64), 0)
    rounded = h.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)
    got = np.asarray(exe(x, w1, w2)).astype(np.float64)
    # h's bf16 rounding may differ by an ulp where its f32 sum sits on a tie: a bf16 ulp's worth
    w64 = w2.astype(np.float64)
    slack = 2.0 ** -8 * (np.abs(rounded) @ np.abs(w64))
    assert np.all(np.abs(got - rounded @ w64) <= _bound(rounded, w64, 0.0) + slack)
