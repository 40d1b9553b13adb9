"""The integer micro-kernels of 8-bit integer matmuls (xlac.targets.cpu.imad_kernels):
chosen by ISA features, and each variant the host can run exact against
numpy's wrapped i32 sums (i8/ui8 extremes, A as it is and packed, C
accumulated into, k over several of the kernel's k blocks)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from test_dpbf16_kernels import compiles_for

from xlac.cpu_model import cpu_model, host_features
from xlac.targets.cpu import imad_kernels, micro_kernels

_V3 = cpu_model("x86-64-v3").features
_V4 = cpu_model("x86-64-v4").features


def test_variant_chosen_by_features():
    assert imad_kernels.variant_for(_V3) == "pmaddwd256"
    assert imad_kernels.variant_for(_V4) == "pmaddwd512"
    assert imad_kernels.variant_for((*_V4, "avx512_vnni")) == "vpdpwssd512"
    assert imad_kernels.variant_for((*_V3, "avx_vnni")) == "vpdpwssd256"
    assert imad_kernels.variant_for(cpu_model("x86-64-v2").features) is None


def _runnable(variant: str) -> tuple[str, ...] | None:
    """Features of a level (or the host) that choose ``variant`` and this host runs."""
    for features in (_V3, _V4, host_features()):
        if imad_kernels.variant_for(features) == variant and not cpu_model("host").lacks(features):
            return features
    return None


def _packed(a: np.ndarray) -> np.ndarray:
    """A in the kernels' packed order (lda 0): per 32-row block and 32-k step, two 16 x 32 tiles."""
    m, k = a.shape
    return np.ascontiguousarray(a.reshape(m // 32, 2, 16, k // 32, 32).transpose(0, 3, 1, 2, 4)).reshape(-1)


@pytest.mark.parametrize("variant", sorted(imad_kernels.VARIANTS))
@pytest.mark.parametrize("rows, k, packed, accumulate", [(32, 32, False, False), (64, 544, False, True),
                                                         (96, 544, True, False), (64, 1056, True, True)])
def test_kernel_is_the_wrapped_i32_sum(tmp_path_factory, variant, rows, k, packed, accumulate):
    features = _runnable(variant)
    if features is None:
        pytest.skip(f"no level this host runs takes {variant}")
    path = micro_kernels.shared_library(imad_kernels.symbol(variant), features,
                                        tmp_path_factory.getbasetemp() / "imad")
    kernel = getattr(ctypes.CDLL(str(path)), imad_kernels.symbol(variant))
    kernel.argtypes, kernel.restype = [ctypes.c_int64] * 9, None
    rng = np.random.default_rng(rows + k)
    a = rng.integers(-128, 128, (rows, k)).astype(np.int16)
    b = rng.integers(-128, 256, (k, 64)).astype(np.int16)
    a[:5], b[:, :3] = -128, 255                           # extremes over all of k
    c = rng.integers(-2**31, 2**31, (rows, 64), dtype=np.int64).astype(np.int32)
    before = c.copy()
    a_in = _packed(a) if packed else a
    kernel(c.ctypes.data, 64, a_in.ctypes.data, 0 if packed else k, b.ctypes.data, 64, k, rows, int(accumulate))
    expected = a.astype(np.int64) @ b[:, :32].astype(np.int64) + (before[:, :32] if accumulate else 0)
    np.testing.assert_array_equal(c[:, :32], expected.astype(np.int32))   # wrapped mod 2^32
    np.testing.assert_array_equal(c[:, 32:], before[:, 32:])              # the other columns untouched


@pytest.mark.parametrize("variant, features", [("vpdpwssd256", '"+avx2", "+fma", "+avxvnni"'),
                                               ("vpdpwssd512", '"+avx512f", "+avx512bw", "+avx512vnni"')])
def test_vnni_kernels_compile_for_their_target(variant, features):
    """Anywhere (this host may lack VNNI): LLVM makes code for a function whose features name it."""
    assert compiles_for(imad_kernels.mlir_text(variant), imad_kernels.symbol(variant), features)
