"""The fast path of ``Executable.run``: a call whose arguments are already what
the program takes costs a few attribute reads per array.

What a call costs before the compiled code runs was most of a small
program's time (a 4-float add: 18-28 us per call, the code 0.4 us of it):
each input checked and converted as if it could be anything, each spec's
dtype parsed from its MLIR name, each array's data pointer read through
``array.ctypes`` (1.4 us an array), the pointer arrays built afresh. A
``PreparedCall`` does the checks that settle a call once per executable,
and per call only asks each argument the questions that can change: is it a
plain ndarray of the compiled dtype and shape, C-contiguous and aligned?
Anything else (lists, scalars, strided or big-endian arrays, a wrong shape)
returns None: ``Executable.run`` then takes the full path, which converts
what it can and names every mismatch (``xlac.signature.check_inputs``).

Compiled code is called with the arrays themselves (``array_caller`` of the
CPU functions): their data pointers are read from the array objects where
numpy keeps them, never through ``array.ctypes``.
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from xlac.dtypes import SUB_BYTE_BITS

# C-contiguous and aligned: numpy's NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED
_READY = 0x0001 | 0x0100


def _data_field_offset() -> int | None:
    """Where an ndarray object keeps its data pointer: right after the object
    header (numpy's ``PyArrayObject_fields.data``, which its C API's
    ``PyArray_DATA`` reads, so compiled extensions depend on it staying put).
    Checked on arrays of a few sizes; None where it does not hold (not
    CPython, or another layout): calls then read ``array.ctypes.data``."""
    if sys.implementation.name != "cpython":
        return None
    offset = object.__basicsize__
    probes = [np.empty(size, dtype) for size in (0, 1, 5, 4096) for dtype in (np.int8, np.float64)]
    if all(ctypes.c_void_p.from_address(id(p) + offset).value == p.ctypes.data for p in probes):
        return offset
    return None


DATA_FIELD = _data_field_offset()
_read_pointer = ctypes.c_void_p.from_address


def data_pointers(arrays) -> list[int]:
    """The address of each array's first element (plain ndarrays)."""
    if DATA_FIELD is None:
        return [array.ctypes.data for array in arrays]
    return [_read_pointer(id(array) + DATA_FIELD).value or 0 for array in arrays]


def pointer_caller(function):
    """``call(inputs, outputs)`` for a compiled function called with a list of
    data pointers (the ``CompiledFunction`` protocol)."""
    def call(inputs, outputs) -> None:
        function(data_pointers((*inputs, *outputs)))
    return call


class SparePointerArrays:
    """ctypes pointer arrays kept for the next call: a call takes one (or
    makes one when every one is in use by another thread) and gives it back."""

    def __init__(self, make):
        self._make = make
        self._spare: list = []

    def take(self):
        try:
            return self._spare.pop()          # atomic: no two threads get the same one
        except IndexError:
            return self._make()

    def give_back(self, arrays) -> None:
        self._spare.append(arrays)


class PreparedCall:
    """How an executable of static shapes runs, worked out on its first call.

    Called with the program's arguments: the outputs, or None when an argument
    is not a plain ndarray of the compiled dtype and shape, C-contiguous and
    aligned (the full path then converts or refuses it). ``run``: the outputs
    for arguments ``check_inputs`` made ready.
    """

    def __init__(self, signature, function):
        # a dynamic signature's specializations run; it never does
        self._count = -1 if signature.is_dynamic else len(signature.inputs)
        self._inputs = tuple((spec.shape, spec.dtype) for spec in signature.inputs)
        self._outputs = tuple((spec.shape, spec.dtype) for spec in signature.outputs)
        self._output_bytes = tuple(0 if signature.is_dynamic else
                                   int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
                                   for shape, dtype in self._outputs)
        self._sub_byte = tuple((index, spec.element_type) for index, spec
                               in enumerate(signature.outputs)
                               if spec.element_type in SUB_BYTE_BITS)
        array_caller = getattr(function, "array_caller", None)
        count = len(self._inputs) + len(self._outputs)
        self._call = (array_caller(count) if array_caller is not None else None) \
            or pointer_caller(function)

    def __call__(self, arrays) -> list[np.ndarray] | None:
        if len(arrays) != self._count:
            return None
        ndarray = np.ndarray
        for array, (shape, dtype) in zip(arrays, self._inputs):
            if type(array) is not ndarray or array.dtype is not dtype or \
                    array.shape != shape or array.flags.num & _READY != _READY:
                return None
        return self.run(arrays)

    def run(self, inputs) -> list[np.ndarray]:
        empty = np.empty
        outputs = [empty(shape, dtype) if size < ALIGNED_OUTPUT_BYTES else aligned_empty(shape, dtype)
                   for (shape, dtype), size in zip(self._outputs, self._output_bytes)]
        self._call(inputs, outputs)
        for index, element_type in self._sub_byte:
            outputs[index] = widen_sub_byte(outputs[index], element_type)
        return outputs


ALIGNED_OUTPUT_BYTES = 1 << 20     # outputs this large start on a cache line
CACHE_LINE = 64


def aligned_empty(shape, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` starting on a cache line. numpy's own
    start 16 bytes in: every 64-byte vector store of such an output spans
    two lines, and the non-temporal stores of a streamed matmul result
    (xla-micro-kernel-calls) need whole lines."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(size + CACHE_LINE, np.uint8)
    start = -raw.ctypes.data % CACHE_LINE
    return raw[start:start + size].view(dtype).reshape(shape)


def widen_sub_byte(array: np.ndarray, element_type: str) -> np.ndarray:
    """Sub-byte integers come back in the low bits of each byte; widen them."""
    bits = SUB_BYTE_BITS.get(element_type)
    if bits is None:
        return array
    if element_type.startswith("ui"):
        return array & np.uint8((1 << bits) - 1)
    shift = np.int8(8 - bits)
    return (array << shift) >> shift
