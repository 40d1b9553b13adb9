"""cuBLASLt through ctypes: finding the library, and the calls xlac makes.

XLA computes a GPU program's dots with cuBLAS(Lt), not with kernels of its
own: on an H200 cuBLAS reaches ~790 TFLOP/s in bf16 on the tensor cores,
which the generated SIMT matmul kernel (no wgmma, no TMA) cannot approach.
The library comes from the pip wheels jax and PyTorch install
(``nvidia/cublas/lib/libcublasLt.so.12`` or ``.so.13`` in site-packages), or
the system's. Nothing here is needed to compile: ``cuda_contractions``
(``XLAC_CUDA_CONTRACTIONS``) decides at compile time whether matmuls become
library calls (``auto``: where the library is found). Tests run this module
against a fake library (test/support/xlac_emulator/fake_cublaslt.py) that
interprets the same descriptors.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os
import site
import sys

from xlac.targets.cuda.errors import CudaError, CudaUnavailable

_SONAMES = ("libcublasLt.so.13", "libcublasLt.so.12")
CONTRACTIONS = ("auto", "cublaslt", "generated")

# cudaDataType_t
DATA_TYPES = {"f32": 0, "f64": 1, "f16": 2, "bf16": 14}
# cublasComputeType_t
COMPUTE_32F, COMPUTE_32F_FAST_TF32, COMPUTE_64F = 68, 77, 70
# cublasOperation_t
OP_N, OP_T = 0, 1
# cublasLtMatmulDescAttributes_t
DESC_TRANSA, DESC_TRANSB, DESC_EPILOGUE, DESC_BIAS_POINTER = 3, 4, 7, 8
# cublasLtMatrixLayoutAttribute_t
LAYOUT_BATCH_COUNT, LAYOUT_STRIDED_BATCH_OFFSET = 5, 6
# cublasLtEpilogue_t
EPILOGUES = {"": 1, "relu": 2, "bias": 4, "bias_relu": 6, "gelu": 32, "bias_gelu": 36}
PREF_MAX_WORKSPACE_BYTES = 1
PREF_MIN_ALIGNMENTS = (5, 6, 7, 8)                 # of A, B, C, D in bytes (default 256)
# Hopper's cuBLAS kernels want up to 32 MiB of workspace (XLA gives them that much)
WORKSPACE_BYTES = 32 << 20


class Algo(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64 * 8)]


class HeuristicResult(ctypes.Structure):
    _fields_ = [("algo", Algo), ("workspaceSize", ctypes.c_size_t), ("state", ctypes.c_int),
                ("wavesCount", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def library_path() -> str | None:
    """libcublasLt beside jax's or PyTorch's nvidia wheels, else the system's; None if absent."""
    return _found(tuple(sys.path))


@functools.lru_cache(maxsize=8)
def _found(path: tuple[str, ...]) -> str | None:
    """``library_path`` for this ``sys.path``: looked for once (every compile asks)."""
    roots = [*path, *_site_packages()]
    for root in dict.fromkeys(r for r in roots if r and os.path.isdir(r)):
        for soname in _SONAMES:
            found = sorted(glob.glob(os.path.join(root, "nvidia", "cu*", "lib", soname))) + \
                sorted(glob.glob(os.path.join(root, "nvidia", "cublas", "lib", soname)))
            if found:
                return found[0]
    for soname in _SONAMES:
        try:
            ctypes.CDLL(soname)
            return soname
        except OSError:
            continue
    return ctypes.util.find_library("cublasLt")


def _site_packages() -> list[str]:
    try:
        return [*site.getsitepackages(), site.getusersitepackages()]
    except AttributeError:                         # some embedded interpreters lack them
        return []


def uses_library(setting: str) -> bool:
    """Do contractions go to cuBLASLt under ``cuda_contractions=setting``? ``auto``:
    where the library is found on this machine (decided when compiling)."""
    if setting == "generated":
        return False
    return setting == "cublaslt" or library_path() is not None


class CublasLt:
    """The cuBLASLt calls xlac makes, on a library object with the C API's
    function names (``ctypes.CDLL``, or a fake); every failure is a CudaError."""

    def __init__(self, lib=None):
        if lib is None:
            path = library_path()
            if path is None:
                raise CudaUnavailable(
                    "this program computes its matmuls with cuBLASLt, and no libcublasLt was "
                    "found (pip install nvidia-cublas-cu12, or compile with "
                    "cuda_contractions='generated' / XLAC_CUDA_CONTRACTIONS=generated)")
            lib = ctypes.CDLL(path)
        self._lib = lib
        handle = ctypes.c_void_p()
        self.check("cublasLtCreate", ctypes.byref(handle))
        self.handle = handle.value

    def check(self, name: str, *args) -> None:
        status = getattr(self._lib, name)(*args)
        if status != 0:
            raise CudaError(f"cuBLASLt: {name} failed with cublasStatus_t {status}", status)

    def create(self, name: str, *args) -> int:
        made = ctypes.c_void_p()
        self.check(name, ctypes.byref(made), *args)
        return made.value

    def set_attribute(self, name: str, descriptor: int, attribute: int, value) -> None:
        self.check(name, ctypes.c_void_p(descriptor), ctypes.c_int(attribute),
                   ctypes.byref(value), ctypes.c_size_t(ctypes.sizeof(value)))

    def layout(self, element: str, rows: int, cols: int, ld: int, batch: int, stride: int) -> int:
        layout = self.create("cublasLtMatrixLayoutCreate", ctypes.c_int(DATA_TYPES[element]),
                             ctypes.c_uint64(rows), ctypes.c_uint64(cols), ctypes.c_int64(ld))
        if batch > 1:
            self.set_attribute("cublasLtMatrixLayoutSetAttribute", layout, LAYOUT_BATCH_COUNT,
                               ctypes.c_int32(batch))
            self.set_attribute("cublasLtMatrixLayoutSetAttribute", layout,
                               LAYOUT_STRIDED_BATCH_OFFSET, ctypes.c_int64(stride))
        return layout

    def heuristic(self, desc: int, layouts: list[int], workspace_bytes: int,
                  alignments: tuple[int, ...]) -> Algo:
        """The library's first algorithm for the problem within ``workspace_bytes``,
        for A, B, C and D at addresses aligned to ``alignments`` bytes."""
        preference = self.create("cublasLtMatmulPreferenceCreate")
        try:
            set_preference = "cublasLtMatmulPreferenceSetAttribute"
            self.set_attribute(set_preference, preference, PREF_MAX_WORKSPACE_BYTES,
                               ctypes.c_uint64(workspace_bytes))
            for attribute, alignment in zip(PREF_MIN_ALIGNMENTS, alignments):
                self.set_attribute(set_preference, preference, attribute, ctypes.c_uint32(alignment))
            result, count = HeuristicResult(), ctypes.c_int(0)
            self.check("cublasLtMatmulAlgoGetHeuristic", ctypes.c_void_p(self.handle),
                       ctypes.c_void_p(desc), *[ctypes.c_void_p(d) for d in layouts],
                       ctypes.c_void_p(preference), ctypes.c_int(1), ctypes.byref(result),
                       ctypes.byref(count))
        finally:
            self.check("cublasLtMatmulPreferenceDestroy", ctypes.c_void_p(preference))
        if count.value < 1:
            raise CudaError("cuBLASLt: no algorithm for this matmul (cublasLtMatmulAlgoGetHeuristic)")
        return result.algo

    def destroy(self, name: str, descriptor: int) -> None:
        self.check(name, ctypes.c_void_p(descriptor))

    def close(self) -> None:
        if self.handle is not None:
            self.check("cublasLtDestroy", ctypes.c_void_p(self.handle))
            self.handle = None
