"""A big program split right after ``xla-outline-kernels``, each piece lowered
to the LLVM dialect by the worker that compiles it (docs/compile-time.md,
twenty-third and twenty-fourth rounds).

Every step of the llvm stage after outlining leaves a kernel function's LLVM
dialect depending on that function alone and on the module's attributes:
run on a module holding some of the functions, the others as bodiless
``func.func private`` declarations, each kernel comes out as the whole
module makes it. So the compiling process only prints the functions once
and shares them out (the entry alone, the kernels by a hash of their text,
as ``pieces.split`` does on the LLVM dialect); each worker runs the rest of
the stage on its piece and makes its machine code. What a piece needs of the
whole module it carries: the module's attributes, the declarations of the
functions it calls, the globals it reads, and the constant table's length
(``xla-constant-table`` reads only that; the weights stay here).

``pieces.split`` on the finished LLVM dialect stays the path where the
compiling process must see the whole stage's module (dumps, traces,
``verify_each``, disabled passes) or where this one cannot split.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from xlac.mlir import ir
from xlac.pipeline.handoffs import printed_kernels
from xlac.signature import CONSTANTS_ATTR
from xlac.targets.cpu import pieces
from xlac.targets.cpu.piece_modules import Piece, bucket, make_piece, named, symbol_name
from xlac.targets.cpu.pipeline import KERNELS_OUTLINED

CUT_AFTER = KERNELS_OUTLINED         # the llvm stage's last step on the whole module
# LLVM dialect per byte of the functions' text after outlining: 4-9x on the five
# real models (vector code expands most); the low end keeps every program that
# was big on the LLVM dialect big here
EXPANSION = 4
_TOP_OK = ("func.func", "llvm.func", "memref.global", "llvm.mlir.global")


# An entry block with more ops than this after outlining (constants not counted)
# is one xla-split-long-blocks cuts into parts (over 8,000 LLVM ops): the parts,
# functions of their own, go to other pieces only when the split is made on the
# LLVM dialect; lowered in the entry's worker they would stay in its piece. Each
# op but a constant grows 6.2-10.2x in the llvm stage (calls, allocations and
# views; 15 programs); the constants, most of them copied into the kernels and
# dead in the entry, 0-0.1x (MobileNet-v2's 2,016 ops, 927 of them constants,
# made 6,880 LLVM ops; a 1,000-dot chain's 2,093, 29 constants, 13,606)
LONG_ENTRY_OPS = 1200
_FREE = ("arith.constant", "ub.poison")


def function_texts(module: ir.Module, entry: str) -> dict[str, str] | None:
    """Each function of ``module`` (after outlining) printed once, or None when
    it is too small for pieces (as ``pieces.function_texts`` judges the LLVM
    dialect, scaled by ``EXPANSION``), holds what a piece cannot copy, or has
    an entry long enough to be cut into parts (``LONG_ENTRY_OPS``). Called right
    after ``CUT_AFTER`` (the stage's last pass run before it): the kernels that
    pass printed to compare them are not printed again."""
    printed = printed_kernels(module.operation)     # taken even where unused: none left behind
    if _long_entry(module, entry):
        return None
    return pieces.function_texts(module, entry, "func.func", _shareable, EXPANSION, printed)


def _long_entry(module: ir.Module, entry: str) -> bool:
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and symbol_name(op) == entry:
            return any(_costly_ops(block) > LONG_ENTRY_OPS for block in op.regions[0].blocks)
    return False


def _costly_ops(block: ir.Block) -> int:
    """The ops of ``block`` that are more than a constant in the LLVM dialect."""
    if len(block.operations) <= LONG_ENTRY_OPS:          # short: no op objects made
        return len(block.operations)
    return sum(op.operation.name not in _FREE for op in block.operations)


def _shareable(op: ir.Operation) -> bool:
    """Whether a copy of ``op`` in every piece that uses it means the same
    (a mutable global would be one per piece)."""
    if op.name not in _TOP_OK:
        return False
    if op.name.endswith("global"):
        return "constant" in op.attributes
    return True


def split(module: ir.Module, entry: str, count: int, texts: dict[str, str],
          steps: list[str], constants: int) -> list[Piece]:
    """The pieces of ``module``, in order (see ``made_largest_first``)."""
    _, made = made_largest_first(module, entry, count, texts, steps, constants)
    return sorted(made, key=lambda piece: pieces.piece_index(piece.name))


def made_largest_first(module: ir.Module, entry: str, count: int, texts: dict[str, str],
                       steps: list[str], constants: int) -> tuple[int, Iterator[Piece]]:
    """How many pieces ``module`` makes, and the pieces made one at a time, largest first (by their
    functions' text), so that the first are compiled while the rest are made:
    the entry, then the other functions in at most ``count`` pieces by a hash
    of their text; each to be lowered by ``steps`` (the rest of the llvm stage)
    where it is compiled, which its key holds. ``constants``: the constant
    table's length (``take_constants`` took the values). Each piece is the same
    whatever the order it is made in (its name is its place among the groups)."""
    top = [op.operation for op in module.body.operations]
    buckets: dict[int, list[str]] = {}
    for name in sorted(texts):
        if name != entry:
            buckets.setdefault(bucket(texts[name], count), []).append(name)
    with module.context:                      # the table's length: placeholders, not the weights
        table = {CONSTANTS_ATTR: ir.ArrayAttr.get([ir.UnitAttr.get()] * constants)} \
            if constants else {}
    salt = json.dumps(["lowered in the worker", steps])
    copy_of = lambda op, symbol, _: _declaration(op) if symbol in texts else op.clone()
    groups = [[entry]] + [buckets[b] for b in sorted(buckets)]
    return len(groups), (make_piece(module, top, set(groups[i]), texts, f"piece{i}", copy_of,
                                    salt, table, tuple(steps))
                         for i in pieces.largest_first(groups, texts))


def _declaration(op: ir.Operation) -> ir.Operation:
    """A bodiless private copy of function ``op``: it is defined in another piece
    (convert-func-to-llvm gives it the signature the definition gets)."""
    attributes = {a.name: a.attr for a in named(op)}
    attributes["sym_visibility"] = ir.StringAttr.get("private")
    return ir.Operation.create("func.func", attributes=attributes, regions=1, loc=op.location)
