"""A stand-in for libcublasLt, for testing the cuda runtime's matmul calls without a GPU.

It has the C API's function names and takes the same ctypes arguments
(``xlac.targets.cuda.cublaslt.CublasLt`` calls it as it calls the library),
keeps the descriptors' attributes as the library does, and computes
``cublasLtMatmul`` on FakeDriver memory by interpreting them: each layout's
type, rows, columns, leading dimension, order, batch count and batch stride;
the A and B transposes; the compute type (``FAST_TF32`` rounds f32 inputs to
TF32's 10 mantissa bits, to nearest with ties away from zero as the tensor
cores' conversion does; 32F and 64F keep them); alpha, beta and C; the bias,
relu and gelu epilogues in the scale type before the conversion to D's type.
A wrong descriptor reads or writes the wrong elements, as the library would.
Each output is summed in k order, each step a multiply-add rounded to the
accumulator's type (f32 for 32F: a product of f32 or narrower inputs is exact
in f64, so this is an FMA but for rare double roundings), as a GEMM kernel's
thread accumulates its outputs; the library's own order (k split into tiles,
split-K) may differ in the last bits.
The work is enqueued on the given stream (a graph being captured records it), advancing
the fake GPU clock as a launch of one block per 64x64 tile of D would.
"""

from __future__ import annotations

import ctypes
import math
from collections import Counter

import ml_dtypes
import numpy as np

from xlac_emulator.fake_cuda import LAUNCH_MS_PER_BLOCK

SUCCESS, INVALID_VALUE, NOT_SUPPORTED = 0, 7, 15
_TYPES = {0: np.float32, 1: np.float64, 2: np.float16, 14: ml_dtypes.bfloat16}
_COMPUTE = {68: "32F", 77: "32F_FAST_TF32", 70: "64F"}
# (compute, A/B type) -> the C/D types the library takes
_SUPPORTED = {("32F", 0): {0}, ("32F_FAST_TF32", 0): {0}, ("64F", 1): {1},
              ("32F", 14): {0, 14}, ("32F", 2): {0, 2}}
_EPILOGUES = {1: (False, ""), 2: (False, "relu"), 4: (True, ""), 6: (True, "relu"),
              32: (False, "gelu"), 36: (True, "gelu")}
# attribute -> (name, ctypes type) of each descriptor kind
_DESC = {0: ("compute", ctypes.c_int32), 1: ("scale", ctypes.c_int32), 3: ("transa", ctypes.c_int32),
         4: ("transb", ctypes.c_int32), 7: ("epilogue", ctypes.c_uint32), 8: ("bias", ctypes.c_void_p),
         10: ("bias_batch_stride", ctypes.c_int64)}
_LAYOUT = {0: ("type", ctypes.c_uint32), 1: ("order", ctypes.c_int32), 2: ("rows", ctypes.c_uint64),
           3: ("cols", ctypes.c_uint64), 4: ("ld", ctypes.c_int64), 5: ("batch", ctypes.c_int32),
           6: ("stride", ctypes.c_int64)}
_PREFERENCE = {1: ("workspace", ctypes.c_uint64), 5: ("align_a", ctypes.c_uint32),
               6: ("align_b", ctypes.c_uint32), 7: ("align_c", ctypes.c_uint32),
               8: ("align_d", ctypes.c_uint32)}


def _value(arg):
    """The Python value of a ctypes argument (a c_* scalar, or byref of one)."""
    obj = getattr(arg, "_obj", arg)
    return obj.value if hasattr(obj, "value") else obj


def _set_out(arg, value) -> None:
    arg._obj.value = value


class FakeCublasLt:
    """The library object ``CublasLt(lib=...)`` takes; ``calls`` counts each function."""

    def __init__(self, driver):
        self._driver = driver
        self._objects: dict[int, dict] = {}
        self.calls: Counter = Counter()
        self.matmuls: list[dict] = []          # each cublasLtMatmul's descriptors, as called

    def __getattr__(self, name: str):
        method = getattr(type(self), "_" + name, None)
        if method is None:
            raise AttributeError(name)

        def counted(*args):
            self.calls[name] += 1
            return method(self, *args)
        return counted

    def _new(self, out, kind: str, **fields) -> int:
        handle = 0x1000 + 16 * len(self._objects)
        self._objects[handle] = {"kind": kind, **fields}
        _set_out(out, handle)
        return SUCCESS

    def _get(self, handle, kind: str) -> dict | None:
        found = self._objects.get(_value(handle))
        return found if found is not None and found["kind"] == kind else None

    def _set(self, handle, kind: str, table: dict, attribute, buffer, size) -> int:
        target = self._get(handle, kind)
        entry = table.get(_value(attribute))
        if target is None or entry is None:
            return INVALID_VALUE
        name, ctype = entry
        if _value(size) != ctypes.sizeof(ctype):       # the library checks the size
            return INVALID_VALUE
        target[name] = ctype.from_buffer_copy(bytes(buffer._obj)).value or 0
        return SUCCESS

    def _destroy(self, handle, kind: str) -> int:
        if self._get(handle, kind) is None:
            return INVALID_VALUE
        del self._objects[_value(handle)]
        return SUCCESS

    # ---- the C API ----------------------------------------------------------------
    def _cublasLtCreate(self, out):
        return self._new(out, "handle")

    def _cublasLtDestroy(self, handle):
        return self._destroy(handle, "handle")

    def _cublasLtMatmulDescCreate(self, out, compute, scale):
        if _value(compute) not in _COMPUTE:
            return INVALID_VALUE
        return self._new(out, "desc", compute=_value(compute), scale=_value(scale), transa=0,
                         transb=0, epilogue=1, bias=0, bias_batch_stride=0)

    def _cublasLtMatmulDescSetAttribute(self, desc, attribute, buffer, size):
        return self._set(desc, "desc", _DESC, attribute, buffer, size)

    def _cublasLtMatmulDescDestroy(self, desc):
        return self._destroy(desc, "desc")

    def _cublasLtMatrixLayoutCreate(self, out, data_type, rows, cols, ld):
        if _value(data_type) not in _TYPES:
            return NOT_SUPPORTED
        return self._new(out, "layout", type=_value(data_type), order=0, rows=_value(rows),
                         cols=_value(cols), ld=_value(ld), batch=1, stride=0)

    def _cublasLtMatrixLayoutSetAttribute(self, layout, attribute, buffer, size):
        return self._set(layout, "layout", _LAYOUT, attribute, buffer, size)

    def _cublasLtMatrixLayoutDestroy(self, layout):
        return self._destroy(layout, "layout")

    def _cublasLtMatmulPreferenceCreate(self, out):
        return self._new(out, "preference", workspace=0, align_a=256, align_b=256, align_c=256,
                         align_d=256)

    def _cublasLtMatmulPreferenceSetAttribute(self, preference, attribute, buffer, size):
        return self._set(preference, "preference", _PREFERENCE, attribute, buffer, size)

    def _cublasLtMatmulPreferenceDestroy(self, preference):
        return self._destroy(preference, "preference")

    def _cublasLtMatmulAlgoGetHeuristic(self, handle, desc, a, b, c, d, preference, requested,
                                        results, count):
        problem = self._problem(handle, desc, a, b, c, d)
        if isinstance(problem, int) or self._get(preference, "preference") is None \
                or _value(requested) < 1:
            return problem if isinstance(problem, int) else INVALID_VALUE
        results._obj.state = SUCCESS
        results._obj.algo.data[0] = 1                  # the one algorithm there is
        _set_out(count, 1)
        return SUCCESS

    def _cublasLtMatmul(self, handle, desc, alpha, a_ptr, a, b_ptr, b, beta, c_ptr, c, d_ptr, d,
                        algo, workspace, workspace_bytes, stream):
        problem = self._problem(handle, desc, a, b, c, d)
        if isinstance(problem, int):
            return problem
        if algo is None or algo._obj.data[0] != 1:
            return INVALID_VALUE
        if _EPILOGUES[problem["desc"]["epilogue"]][0] and not problem["desc"]["bias"]:
            return INVALID_VALUE
        scalar = ctypes.c_double if problem["desc"]["scale"] == 1 else ctypes.c_float
        alpha_value, beta_value = (ctypes.cast(ctypes.pointer(s._obj), ctypes.POINTER(scalar))
                                   .contents.value for s in (alpha, beta))   # read as the scale type
        pointers = [_value(p) or 0 for p in (a_ptr, b_ptr, c_ptr, d_ptr)]
        for pointer, layout in zip(pointers, problem["layouts"]):
            self._driver._inside(pointer, _extent(layout) * np.dtype(_TYPES[layout["type"]]).itemsize)
        self.matmuls.append({"desc": dict(problem["desc"]),
                             "layouts": [dict(x) for x in problem["layouts"]]})
        work = lambda: _compute(problem, pointers, alpha_value, beta_value)  # noqa: E731
        d = problem["layouts"][3]                      # fake GPU time: per 64x64 tile of D
        tiles = d["batch"] * math.ceil(d["rows"] / 64) * math.ceil(d["cols"] / 64)
        self._driver._enqueue(work, _value(stream), fake_ms=LAUNCH_MS_PER_BLOCK * tiles)
        return SUCCESS

    def _problem(self, handle, desc, *layouts) -> dict | int:
        """The descriptors of one matmul, checked as the library checks them."""
        found_desc = self._get(desc, "desc")
        found = [self._get(x, "layout") for x in layouts]
        if self._get(handle, "handle") is None or found_desc is None or None in found:
            return INVALID_VALUE
        a, b, c, d = found
        m, k = _op_shape(a, found_desc["transa"])
        k2, n = _op_shape(b, found_desc["transb"])
        if k != k2 or (c["rows"], c["cols"]) != (m, n) or (d["rows"], d["cols"]) != (m, n):
            return INVALID_VALUE
        if any(x["ld"] < (x["rows"] if x["order"] == 0 else x["cols"]) for x in found):
            return INVALID_VALUE
        if len({x["batch"] for x in found}) != 1 or c["type"] != d["type"] or a["type"] != b["type"]:
            return INVALID_VALUE
        compute = _COMPUTE[found_desc["compute"]]
        if d["type"] not in _SUPPORTED.get((compute, a["type"]), set()) \
                or found_desc["epilogue"] not in _EPILOGUES:
            return NOT_SUPPORTED
        return {"desc": found_desc, "layouts": found, "compute": compute}


def _op_shape(layout: dict, transpose: int) -> tuple[int, int]:
    rows, cols = layout["rows"], layout["cols"]
    return (cols, rows) if transpose else (rows, cols)


def _extent(layout: dict) -> int:
    """Elements from the first to one past the last a layout names."""
    rows, cols, ld = layout["rows"], layout["cols"], layout["ld"]
    inner, outer = (rows, cols) if layout["order"] == 0 else (cols, rows)
    return (layout["batch"] - 1) * layout["stride"] + (outer - 1) * ld + inner


def _matrices(pointer: int, layout: dict) -> np.ndarray:
    """A [batch, rows, cols] view of device memory as ``layout`` describes it."""
    dtype = np.dtype(_TYPES[layout["type"]])
    raw = (ctypes.c_uint8 * (_extent(layout) * dtype.itemsize)).from_address(pointer)
    flat = np.frombuffer(raw, dtype=dtype)
    size, ld = dtype.itemsize, layout["ld"]
    strides = (1, ld) if layout["order"] == 0 else (ld, 1)
    return np.lib.stride_tricks.as_strided(
        flat, (layout["batch"], layout["rows"], layout["cols"]),
        (layout["stride"] * size, strides[0] * size, strides[1] * size))


def tf32(values: np.ndarray) -> np.ndarray:
    """f32 values rounded to TF32 (10 mantissa bits), to nearest, ties away from zero."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    finite = np.isfinite(values)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).astype(np.uint32)
    return np.where(finite, rounded, bits).view(np.float32)


def _inputs(matrices: np.ndarray, transpose: int, compute: str) -> np.ndarray:
    values = matrices.transpose(0, 2, 1) if transpose else matrices
    if compute == "32F_FAST_TF32":
        values = tf32(np.asarray(values, dtype=np.float32))
    return np.asarray(values, dtype=np.float64)


def _sum_in_order(left: np.ndarray, right: np.ndarray, accumulator) -> np.ndarray:
    """[batch, m, k] x [batch, k, n], summed along k in order in ``accumulator``."""
    total = np.zeros((left.shape[0], left.shape[1], right.shape[2]), accumulator)
    for index in range(left.shape[2]):
        term = left[:, :, index, None] * right[:, None, index, :]
        total = (total.astype(np.float64) + term).astype(accumulator)
    return total


def _compute(problem: dict, pointers: list[int], alpha: float, beta: float) -> None:
    desc, (a, b, c, d), compute = problem["desc"], problem["layouts"], problem["compute"]
    accumulator = np.float64 if compute == "64F" else np.float32
    product = _sum_in_order(_inputs(_matrices(pointers[0], a), desc["transa"], compute),
                            _inputs(_matrices(pointers[1], b), desc["transb"], compute), accumulator)
    scale = np.float64 if desc["scale"] == 1 else np.float32
    result = scale(alpha) * product.astype(scale)
    if beta != 0:
        result = result + scale(beta) * _matrices(pointers[2], c).astype(scale)
    has_bias, activation = _EPILOGUES[desc["epilogue"]]
    if has_bias:
        bias_layout = {"type": d["type"], "order": 0, "rows": d["rows"], "cols": 1, "ld": d["rows"],
                       "batch": d["batch"], "stride": desc["bias_batch_stride"]}
        result = result + _matrices(desc["bias"], bias_layout).astype(scale)
    if activation == "relu":
        result = np.maximum(result, scale(0))
    elif activation == "gelu":                         # the library's tanh approximation
        inner = math.sqrt(2 / math.pi) * (result + 0.044715 * result ** 3)
        result = 0.5 * result * (1 + np.tanh(inner))
    out = _matrices(pointers[3], d)
    out[...] = result.astype(scale).astype(out.dtype)
