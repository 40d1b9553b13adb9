"""What the two splits of a big program share (``pieces`` on the LLVM
dialect, ``early_pieces`` right after outlining): a piece, the hash that picks
a function's piece, and the module of one piece with its key."""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Callable

from xlac.mlir import ir
from xlac.record import record

# a symbol reference: bare (@name) or quoted (@"__constant_xcomplex<f32>": memref
# globals of complex constants are named after their type, which needs quotes)
_SYMBOL = re.compile(r'@(?:"((?:[^"\\]|\\.)*)"|([A-Za-z_$.][\w$.\-]*))')


def symbols(text: str) -> list[str]:
    """The names of the symbols ``text`` refers to, quotes taken off."""
    return [quoted or bare for quoted, bare in _SYMBOL.findall(text)]


@record
class Piece:
    """One module to compile: its bytecode and the key of its object code."""

    name: str
    bytecode: bytes
    key: str
    external: tuple[str, ...]      # functions it calls and data it reads but does not define
    steps: tuple[str, ...] = ()    # passes its worker runs first (``early_pieces``)


def bucket(text: str, count: int) -> int:
    """The piece of a function, of ``count``, by a hash of its ``text`` (its name left
    out): a kernel lands in the same piece whatever else changed."""
    body = text.split("(", 1)[1]                      # the text after the function's name
    return int.from_bytes(hashlib.sha256(body.encode()).digest()[:4], "little") % count


def make_piece(module: ir.Module, top: list[ir.Operation], members, texts: dict[str, str],
               name: str, copy_of: Callable, salt: str = "", attributes: dict | None = None,
               steps: tuple[str, ...] = ()) -> Piece:
    """A module with ``members``' bodies, ``module``'s attributes (and ``attributes``),
    and ``copy_of(op, symbol, external)`` of each other op they refer to or
    that has no symbol (a declaration or a copy; ``external`` takes what it
    leaves undefined). Its key: ``salt``, the attributes and every op's text."""
    used = {m for member in members for m in symbols(texts[member])}
    piece = ir.Module.create(loc=ir.Location.unknown(module.context))
    for attr in named(module.operation):
        piece.operation.attributes[attr.name] = attr.attr
    for attr_name, value in (attributes or {}).items():
        piece.operation.attributes[attr_name] = value
    external: list[str] = []
    key = hashlib.sha256((salt + " ".join(str(a) for a in named(piece.operation))).encode())
    with module.context, ir.InsertionPoint(piece.body):
        for op in top:
            symbol = symbol_name(op) if "sym_name" in op.attributes else None
            if symbol in members:
                op.clone()
                key.update(texts[symbol].encode())
            elif symbol is None or symbol in used:
                copy = copy_of(op, symbol, external)
                key.update(_local_text(copy.operation).encode())
    buffer = io.BytesIO()
    piece.operation.write_bytecode(buffer)
    return Piece(name, buffer.getvalue(), key.hexdigest(), tuple(external), steps)


def _local_text(op: ir.Operation) -> str:
    """``op`` printed as it stands alone (a declaration, a global, a constant).

    Why the local scope: printed in its piece's scope, the printer first walked
    the whole piece (the kernels cloned into it so far) for its names and
    aliases, for each of these small ops: 8-37 ms a model for 5 kB of text
    (the CNN training step's 143 prints), against 1-6 ms alone; the text is the
    same (checked on the six models of ../shared/models)."""
    return op.get_asm(enable_debug_info=False, use_local_scope=True, assume_verified=True)


def symbol_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def named(op: ir.Operation) -> list:
    attributes = op.attributes
    return [attributes[i] for i in range(len(attributes))]   # NamedAttributes, by index


def with_local_callees(members: list[str], texts: dict[str, str], local: set[str]) -> list[str]:
    """``members`` and the internal functions (``local``) they use, directly or
    through one another: each piece defines its own copy of those (an internal
    function cannot be declared in one piece and defined in another; the shared
    parallel dispatcher and a kernel's loop bodies are internal)."""
    found, todo = list(members), list(members)
    while todo:
        for used in symbols(texts[todo.pop()]):
            if used in local and used not in found:
                found.append(used)
                todo.append(used)
    return found


def late_copy(op: ir.Operation, symbol: str | None, external: list[str]) -> ir.Operation:
    """A function another piece defines declared; anything else copied."""
    if op.name == "llvm.func" or _external_data(op):   # a constant's bytes: the library's
        external.append(symbol)
    return _declaration(op) if op.name == "llvm.func" else op.clone()


def _external_data(op: ir.Operation) -> bool:
    """Whether ``op`` declares a global defined elsewhere (a constant's bytes)."""
    return op.name == "llvm.mlir.global" and "value" not in op.attributes \
        and not op.regions[0].blocks


def _declaration(op: ir.Operation) -> ir.Operation:
    """A bodiless copy of function ``op``: it is defined in another piece."""
    attributes = {a.name: a.attr for a in named(op)
                  if a.name not in ("linkage", "passthrough", "sym_visibility")}
    return ir.Operation.create("llvm.func", attributes=attributes, regions=1, loc=op.location)
