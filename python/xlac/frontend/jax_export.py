"""``jax.export`` artifacts: the StableHLO program inside, and Shardy in bytecode.

``Exported.serialize()`` is a flatbuffer holding the program as a StableHLO
portable artifact (MLIR bytecode) among its other fields. Flatbuffers store
a byte vector as a little-endian 32-bit length followed by the bytes, so the
program is found by its bytecode magic and the length just before it: no
flatbuffers schema (or JAX) is needed.

A program that uses Shardy carries ``sdy`` attributes in Shardy's own
bytecode encoding, which only the Shardy dialect reads; these bindings lack
it. For those, JAX's MLIR (``jaxlib``), when installed, turns the bytecode
into text, which ``xlac.frontend.shardy_text`` reads.
"""

from __future__ import annotations

import struct

from xlac.errors import CompileError, error

BYTECODE_MAGIC = b"ML\xefR"


def embedded_program(data: bytes) -> bytes | None:
    """The bytecode inside a ``jax.export`` flatbuffer, or None if ``data`` is not one."""
    if data.startswith(BYTECODE_MAGIC) or b"\0" not in data[:64]:
        return None                           # bytecode or text, not a flatbuffer
    start = data.find(BYTECODE_MAGIC)
    while start >= 4:
        (length,) = struct.unpack_from("<I", data, start - 4)
        if start + length <= len(data) and length > len(BYTECODE_MAGIC):
            return data[start:start + length]
        start = data.find(BYTECODE_MAGIC, start + 1)
    return None


def shardy_bytecode_as_text(data: bytes, source_name: str) -> str:
    """Bytecode with Shardy attributes as MLIR text, read by jaxlib."""
    try:
        from jax._src.interpreters import mlir as jax_mlir
        from jax._src.lib import _jax
    except ImportError:
        raise CompileError(error("this program stores Shardy (sdy) sharding attributes in "
                                 "Shardy's bytecode encoding, which only the Shardy dialect "
                                 "reads", source_name),
                           "install jax (pip install jax) so xlac can read it, or pass the text "
                           "of exported.mlir_module()") from None
    with jax_mlir.make_ir_context():
        module = _jax.mlir.deserialize_portable_artifact(data)
        return module.operation.get_asm(enable_debug_info=True)


def is_shardy_bytecode_error(message: str) -> bool:
    return "'sdy'" in message and "bytecode" in message
