"""Element types: MLIR spelling <-> numpy dtype, and their size in memory.

The convention is the conformance runner's and JAX's: sub-byte integers are
stored one per byte, ``i1`` is numpy ``bool``, bf16 and the fp8 types come
from ``ml_dtypes``.
"""

from __future__ import annotations

TYPE_CHECKING = False        # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:            # numpy loads on first use: a cache hit returns before any
    import numpy as np

    from xlac.mlir import ir

# numpy's names (np.dtype takes them), so that importing this costs nothing
_BASIC = {
    "i1": "bool",
    "i2": "int8", "i4": "int8", "i8": "int8", "si8": "int8",
    "i16": "int16", "si16": "int16",
    "i32": "int32", "si32": "int32",
    "i64": "int64", "si64": "int64",
    "ui2": "uint8", "ui4": "uint8", "ui8": "uint8",
    "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
    "f16": "float16", "f32": "float32", "f64": "float64",
    "complex<f32>": "complex64", "complex<f64>": "complex128",
}

_ML_DTYPES = {
    "bf16": "bfloat16",
    "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2",
    "f8E4M3FNUZ": "float8_e4m3fnuz", "f8E5M2FNUZ": "float8_e5m2fnuz",
    "f8E4M3B11FNUZ": "float8_e4m3b11fnuz", "f8E4M3": "float8_e4m3",
    "f8E3M4": "float8_e3m4", "f4E2M1FN": "float4_e2m1fn",
    "f6E2M3FN": "float6_e2m3fn", "f6E3M2FN": "float6_e3m2fn",
    "f8E8M0FNU": "float8_e8m0fnu",
}


# Integers narrower than a byte, stored one per byte: their bits
SUB_BYTE_BITS = {"i2": 2, "i4": 4, "ui2": 2, "ui4": 4}

_DTYPES: dict = {}           # element type -> numpy dtype: np.dtype("float32") parses its name


def is_element_type(name: str) -> bool:
    """Does MLIR element type ``name`` have a numpy dtype? (No numpy import.)"""
    return name in _BASIC or name in _ML_DTYPES


def numpy_dtype(element_type: str) -> np.dtype:
    """The numpy dtype that holds MLIR element type ``element_type``."""
    dtype = _DTYPES.get(element_type)
    if dtype is None:
        dtype = _DTYPES[element_type] = _find_dtype(element_type)
    return dtype


def storage_bytes(element_type: str) -> int:
    """Bytes one element of ``element_type`` (MLIR spelling) takes in an array: its
    numpy dtype's itemsize, known without importing numpy (a cache hit sizes its
    buffers so): sub-byte types a byte each, a complex twice its part."""
    if element_type.startswith("complex<"):
        return 2 * storage_bytes(element_type[len("complex<"):-1])
    if element_type == "bf16":
        return 2
    if element_type in _ML_DTYPES:             # the f8, f6 and f4 types: a byte each
        return 1
    if element_type not in _BASIC:
        raise ValueError(f"element type {element_type} has no numpy dtype")
    return max(1, int(element_type.lstrip("suif")) // 8)


def _find_dtype(element_type: str) -> np.dtype:
    import numpy as np
    if element_type in _BASIC:
        return np.dtype(_BASIC[element_type])
    ml_dtypes = _ml_dtypes()
    if element_type in _ML_DTYPES and ml_dtypes is not None:
        return np.dtype(getattr(ml_dtypes, _ML_DTYPES[element_type]))
    raise ValueError(f"element type {element_type} has no numpy dtype")


def _ml_dtypes():
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - ml_dtypes is a dependency
        return None
    return ml_dtypes


_SHORT_NAMES = {"bool": "pred", "float16": "f16", "float32": "f32", "float64": "f64",
                "complex64": "c64", "complex128": "c128", "bfloat16": "bf16"}


def short_name(dtype: np.dtype) -> str:
    """XLA-style short dtype name for messages: f32, s8, u16, pred, bf16."""
    import numpy as np
    dtype = np.dtype(dtype)
    if dtype.name in _SHORT_NAMES:
        return _SHORT_NAMES[dtype.name]
    if dtype.kind == "i":
        return f"s{dtype.itemsize * 8}"
    if dtype.kind == "u":
        return f"u{dtype.itemsize * 8}"
    return dtype.name


def shape_str(dtype: np.dtype, shape: tuple[int, ...]) -> str:
    """``f32[4,8]``: how XLA and JAX spell a shaped type in messages."""
    return f"{short_name(dtype)}[{','.join(str(d) for d in shape)}]"


def tensor_type(shape, element_type: str) -> str:
    """``tensor<4x?xf32>``: the one place xlac spells a tensor type (None dims are ``?``)."""
    dims = "".join(f"{'?' if d is None else d}x" for d in shape)
    return f"tensor<{dims}{element_type}>"


def element_bytes(element: ir.Type) -> int | None:
    """Bytes one element of MLIR type ``element`` takes in memory: a byte at
    least (i1, i4, f4E2M1FN are stored a byte each, as above), ``index`` 8
    (xlac's code is 64-bit), a complex twice its part; None for a type with
    no bit width (a vector, a tuple)."""
    from xlac.mlir import ir  # here, so that importing this module loads no MLIR
    if isinstance(element, ir.ComplexType):
        part = element_bytes(ir.ComplexType(element).element_type)
        return None if part is None else 2 * part
    if isinstance(element, ir.IndexType):
        return 8
    width = getattr(element, "width", None)       # integer and float types
    return None if width is None else max(1, (width + 7) // 8)
