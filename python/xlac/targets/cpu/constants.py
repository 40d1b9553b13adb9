"""A CPU program's large constants, as the compiled code owns them.

``xla-constants-to-arguments`` takes the entry's large constants out of the
program (the module attribute ``xla.constant_arguments`` keeps their values),
``xla-constant-arguments-to-globals`` has the code read constant ``i`` from
the external symbol ``__xlac_constant_i`` and ``xla-constant-table`` its
address from entry ``i`` of ``__xlac_constant_table``. Here their bytes are
read once, after the passes, into arrays the compiled function keeps: the
JIT's table points at them, as does a library's run in this process; an
artifact carries them beside its library (``xlac.targets.cpu.constant_data``),
an ``xla-compile`` library in its read-only data (``xlac.targets.cpu.serialize``).
They never pass through LLVM.

The bindings give the bytes of a plain ``dense`` attribute of a numpy type
as a buffer, and nothing else (a ``dense_resource`` blob has no accessor at
all, a bf16 ``dense`` no buffer). A resource's are read from the bytecode of
a module holding only it, where MLIR writes the blob as it is (47 MB in
0.08 s); what else is left, from its text, where MLIR writes it as one hex
string (0.8 s for 47 MB).
"""

from __future__ import annotations

import binascii
import io

import numpy as np

from xlac.errors import CompileError, error
from xlac.mlir import ir
from xlac.record import record
from xlac.signature import CONSTANTS_ATTR, aligned_copy, constant_symbol

_BUG = "this is an xlac bug: please report it with the input program"


@record
class Constant:
    """One constant of the compiled code: its symbol and its bytes (aligned)."""

    symbol: str
    data: np.ndarray                   # uint8, ``CONSTANT_ALIGNMENT``-aligned, read-only

    @property
    def address(self) -> int:
        return self.data.ctypes.data


def has_constants(module: ir.Module) -> bool:
    """Whether xla-constants-to-arguments took any constant out of ``module``."""
    return CONSTANTS_ATTR in module.operation.attributes


def take_constants(module: ir.Module) -> tuple[Constant, ...]:
    """The constants listed in ``module`` (its attribute is removed: nothing
    after this, a piece's copy of the module attributes included, carries them)."""
    attributes = module.operation.attributes
    if CONSTANTS_ATTR not in attributes:
        return ()
    values = ir.ArrayAttr(attributes[CONSTANTS_ATTR])
    constants = tuple(Constant(constant_symbol(index), _bytes_of(values[index], module.context))
                      for index in range(len(values)))
    del attributes[CONSTANTS_ATTR]
    return constants


def _bytes_of(value: ir.Attribute, context: ir.Context) -> np.ndarray:
    """The bytes of a ``dense`` or ``dense_resource`` elements attribute."""
    expected = _expected_bytes(value)
    try:
        data = memoryview(ir.DenseElementsAttr(value)).cast("B")
    except (ValueError, BufferError):       # a resource, or a type with no buffer format
        holder = ir.Module.create(loc=ir.Location.unknown(context))
        holder.operation.attributes["value"] = value
        data = _resource_blob(holder, expected)
        if data is None:
            data = _hex_data(holder, value)
    if len(data) != expected:
        raise CompileError(error(f"constant {str(value)[:80]} has {len(data)} bytes, its type "
                                 f"{expected}"), _BUG)
    return aligned_copy(data)


def _expected_bytes(value: ir.Attribute) -> int:
    shaped = ir.ShapedType(value.type)
    count = 1
    for dim in shaped.shape:
        count *= dim
    return count * shaped.element_type.width // 8


def _resource_blob(holder: ir.Module, size: int) -> memoryview | None:
    """The blob of ``holder``'s one resource, from its bytecode; None where the
    bytecode is not as expected (then the text is read instead).

    MLIR bytecode: magic, version, producer (NUL-terminated), then sections:
    an id byte (0x80: aligned), a length, [an alignment and 0xCB padding],
    the data. The resource section (id 5) holds each blob as its alignment,
    its length, 0xCB padding to that alignment, its bytes.
    """
    buffer = io.BytesIO()
    holder.operation.write_bytecode(buffer)
    data = buffer.getbuffer()
    try:
        position = bytes(data[:64]).index(b"\0", 5) + 1          # past the producer
        while position < len(data):
            code, position = data[position], position + 1
            length, position = _varint(data, position)
            if code & 0x80:
                alignment, position = _varint(data, position)
                position = _aligned(position, alignment)
            if code & 0x7F == 5:
                alignment, start = _varint(data, position)
                length, start = _varint(data, start)
                start = _aligned(start, alignment)
                return data[start:start + size] if length == size else None
            position += length
    except (IndexError, ValueError):
        pass
    return None


def _varint(data, position: int) -> tuple[int, int]:
    """MLIR's prefix varint at ``position``: its value and where the next thing starts."""
    first = data[position]
    if first == 0:
        return int.from_bytes(data[position + 1:position + 9], "little"), position + 9
    count = (first & -first).bit_length()         # trailing zeros + 1 bytes
    return int.from_bytes(data[position:position + count], "little") >> count, position + count


def _aligned(position: int, alignment: int) -> int:
    return -(-position // alignment) * alignment


def _hex_data(holder: ir.Module, value: ir.Attribute) -> bytes:
    """The bytes of ``holder``'s one attribute, from its text: a non-splat
    ``dense`` of more than 100 elements prints as one hex string (so
    xla-constants-to-arguments takes no smaller one), a resource's blob too,
    after 4 bytes of its alignment."""
    text = holder.operation.get_asm(binary=True, assume_verified=True)
    start = text.rfind(b'"0x')
    end = text.find(b'"', start + 1)
    if start < 0 or end < 0:
        raise CompileError(error(f"cannot read the bytes of constant {str(value)[:80]}"), _BUG)
    data = binascii.a2b_hex(memoryview(text)[start + 3:end])
    resource = text.startswith(b"module attributes {value = dense_resource<")
    return data[4:] if resource else data
