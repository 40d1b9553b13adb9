"""DLPack capsules, made and consumed through ctypes (the C structs of dlpack.h).

A capsule holds a ``DLManagedTensor`` (named "dltensor", DLPack < 1.0) or a
``DLManagedTensorVersioned`` ("dltensor_versioned", 1.0 and later). Its
consumer renames the capsule "used_dltensor" (or "used_dltensor_versioned")
and owns the tensor from then on: it calls the tensor's ``deleter`` when done.
A capsule never consumed calls the deleter from its own destructor.
"""

from __future__ import annotations

import ctypes

import numpy as np

DL_CPU, DL_CUDA = 1, 2                   # DLDeviceType
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6     # DLDataTypeCode
VERSION = (1, 0)
READ_ONLY, IS_COPIED = 1, 2               # DLManagedTensorVersioned.flags bits
LEGACY, VERSIONED = b"dltensor", b"dltensor_versioned"
_USED = {LEGACY: b"used_dltensor", VERSIONED: b"used_dltensor_versioned"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _Deleter)]
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", _Deleter), ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]

# private prototypes of the capsule API: ctypes.pythonapi's function objects are shared,
# and another module setting their restype must not change what these return
_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _capi(name: str, restype, *argtypes):
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_new = _capi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                     _CapsuleDestructor)
_capsule_pointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_capsule_name = _capi("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
_capsule_rename = _capi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
# in a capsule's destructor the capsule has no references left: touch it by address only
_is_valid_at = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_pointer_at = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)

_CODES = {"i": _INT, "u": _UINT, "f": _FLOAT, "c": _COMPLEX, "b": _BOOL}
_EXPORTED: dict[int, tuple] = {}           # managed tensor address -> what it keeps alive


def dl_dtype(dtype: np.dtype) -> DLDataType:
    if dtype.name == "bfloat16":
        return DLDataType(_BFLOAT, 16, 1)
    if dtype.kind not in _CODES:
        raise BufferError(f"DLPack has no type for {dtype}")
    return DLDataType(_CODES[dtype.kind], dtype.itemsize * 8, 1)


def numpy_dtype(dl: DLDataType) -> np.dtype:
    """The numpy dtype of a DLPack type (BufferError for one numpy has not)."""
    if dl.lanes != 1:
        raise BufferError(f"DLPack vector types ({dl.lanes} lanes) are not arrays xlac takes")
    if dl.code == _BFLOAT and dl.bits == 16:
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    if dl.code == _BOOL and dl.bits == 8:
        return np.dtype(np.bool_)
    kinds = {_INT: "i", _UINT: "u", _FLOAT: "f", _COMPLEX: "c"}
    if dl.code not in kinds or dl.bits % 8:
        raise BufferError(f"DLPack type code {dl.code} with {dl.bits} bits is not one xlac takes")
    return np.dtype(f"{kinds[dl.code]}{dl.bits // 8}")


@_Deleter
def _release_exported(managed: int) -> None:
    _EXPORTED.pop(managed, None)              # the keepalive (and its device buffer) goes


def _destroy_capsule(capsule: int) -> None:
    """A capsule nobody consumed: its tensor is still ours, delete it."""
    for name in (LEGACY, VERSIONED):
        if _is_valid_at(capsule, name):
            _release_exported(_pointer_at(capsule, name))


_DESTROY_CAPSULE = _CapsuleDestructor(_destroy_capsule)


def export_capsule(pointer: int, shape: tuple, dtype: np.dtype, device: tuple[int, int],
                   keepalive, versioned: bool, copied: bool = False):
    """A DLPack capsule of the C-contiguous array at ``pointer``; ``keepalive`` lives
    until the consumer calls the deleter (or the capsule dies unconsumed)."""
    ndim = len(shape)
    shape_array = (ctypes.c_int64 * max(ndim, 1))(*shape)
    tensor = DLTensor(pointer, DLDevice(*device), ndim, dl_dtype(dtype),
                      ctypes.cast(shape_array, ctypes.POINTER(ctypes.c_int64)), None, 0)
    if versioned:
        managed = DLManagedTensorVersioned(DLPackVersion(*VERSION), None, _release_exported,
                                           IS_COPIED if copied else 0, tensor)
    else:
        managed = DLManagedTensor(tensor, None, _release_exported)
    address = ctypes.addressof(managed)
    _EXPORTED[address] = (managed, shape_array, keepalive)
    return _capsule_new(address, VERSIONED if versioned else LEGACY, _DESTROY_CAPSULE)


class ImportedTensor:
    """A consumed capsule's tensor: its data pointer, shape, dtype and device; the
    producer's deleter runs at ``release()``."""

    def __init__(self, capsule):
        name = _capsule_name(capsule) if type(capsule).__name__ == "PyCapsule" else None
        if name not in _USED:
            raise BufferError(f"not a DLPack capsule (named {name!r}); was it consumed already?")
        address = _capsule_pointer(capsule, name)
        kind = DLManagedTensorVersioned if name == VERSIONED else DLManagedTensor
        self._managed = kind.from_address(address)
        self._address = address
        _capsule_rename(capsule, _USED[name])      # ours now: the capsule won't delete it
        self.read_only = name == VERSIONED and bool(self._managed.flags & READ_ONLY)
        tensor = self._managed.dl_tensor
        self.device = (tensor.device.device_type, tensor.device.device_id)
        self.shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
        self.dtype = numpy_dtype(tensor.dtype)
        self.pointer = (tensor.data or 0) + tensor.byte_offset
        self.strides = None if not tensor.strides else \
            tuple(tensor.strides[i] for i in range(tensor.ndim))

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def is_c_contiguous(self) -> bool:
        """Element strides of a C-contiguous array (dims of size 1 may have any)."""
        return self.strides is None or is_c_contiguous(self.shape, self.strides)

    def release(self) -> None:
        managed, self._managed = self._managed, None
        if managed is not None and managed.deleter:
            managed.deleter(self._address)


def is_c_contiguous(shape: tuple, strides: tuple) -> bool:
    """``strides`` (in elements) are those of a C-contiguous array of ``shape``."""
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True
