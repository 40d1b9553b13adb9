"""xla-bf16-memory-as-i16: bf16 values that are only moved become i16."""

from __future__ import annotations

import re
import struct

from xlac.mlir import ir
from xlac.passes.base import ModulePass, forget_module_ops, memoized_by_type, module_ops, nested_ops

# Ops that move bits without reading them as numbers: with i16 for bf16 they
# mean the same. Anything else on a bf16 value keeps its function as it is.
_MOVES = {"llvm.load", "llvm.store", "llvm.select", "llvm.intr.masked.load",
          "llvm.intr.masked.store", "llvm.intr.masked.gather", "llvm.intr.masked.scatter",
          "llvm.mlir.constant", "llvm.mlir.poison", "llvm.mlir.undef", "llvm.mlir.zero",
          "llvm.insertelement", "llvm.extractelement", "llvm.shufflevector", "llvm.bitcast",
          "llvm.br", "llvm.cond_br", "llvm.getelementptr", "llvm.insertvalue",
          "llvm.extractvalue"}


class Bf16MemoryAsI16(ModulePass):
    """In each LLVM function whose bf16 values are only loaded, stored,
    selected, shuffled or bitcast (bf16 arithmetic is integer code by now),
    give those values the type i16 (vectors: `vector<Nxi16>`).

    Why: on a CPU without native bf16, LLVM legalizes a bf16 scalar as an
    f32: a `select` of two bf16 values, or a masked vector move split into
    per-lane moves (no 16-bit masked moves without AVX-512), extends and then
    truncates with `__truncsfbf2`, which the JIT cannot link ("Symbols not
    found"): every bf16 program failed on AVX2-only machines. As i16 the bits
    move untouched. Functions with bf16 in their signature or other bf16 ops
    (native bf16 conversions) are left alone. Run last, on the LLVM dialect.

        %v = llvm.load %p : !llvm.ptr -> bf16
        %s = llvm.select %c, %v, %w : i1, bf16
      ->
        %v = llvm.load %p : !llvm.ptr -> i16
        %s = llvm.select %c, %v, %w : i1, i16
    """

    name = "xla-bf16-memory-as-i16"
    keeps_ops = True                   # unless it retypes a function (below)

    def run(self, module: ir.Operation) -> None:
        holds = memoized_by_type(_holds_bf16)      # types are uniqued: a program has a few dozen
        if not _moves_bf16(module_ops(module), holds):
            return                          # an f32 program: no function to look at
        forget_module_ops()                 # a retyped function loses bitcasts and constants
        with ir.Location.unknown(module.context):      # type constructors want one
            for op in module.regions[0].blocks[0].operations:
                func = op.operation
                if func.name == "llvm.func" and len(func.regions[0].blocks) \
                        and _bf16_only_moved(func, holds):
                    _retype(func)


def _as_i16(type_: ir.Type) -> ir.Type | None:
    """``type_`` with i16 for bf16, or None when it holds no bf16."""
    if not _holds_bf16(type_):
        return None
    if isinstance(type_, ir.BF16Type):
        return ir.IntegerType.get_signless(16)
    if isinstance(type_, ir.VectorType):
        return ir.VectorType.get(ir.VectorType(type_).shape, ir.IntegerType.get_signless(16))
    return ir.Type.parse(str(type_).replace("bf16", "i16"))   # an n-D vector: arrays of 1-D ones


def _holds_bf16(type_: ir.Type) -> bool:
    """Whether ``type_`` is bf16, a vector of it or an LLVM array of such vectors.
    The common types are told apart without printing them: printing every
    value's type made this pass 10% of an f32 ResNet-18's compile."""
    if isinstance(type_, ir.BF16Type):
        return True
    if isinstance(type_, ir.VectorType):
        return isinstance(ir.VectorType(type_).element_type, ir.BF16Type)
    if isinstance(type_, (ir.IntegerType, ir.F32Type, ir.F64Type, ir.F16Type, ir.IndexType)):
        return False
    text = str(type_)
    return text.startswith("!llvm.array<") and "bf16" in text


def _moves_bf16(ops: list[ir.Operation], holds=_holds_bf16) -> bool:
    """Whether some move among ``ops`` makes a bf16 value: where none does, no
    function has bf16 values (``_bf16_only_moved``), so none is retyped."""
    return any(holds(r.type) for op in ops if op.name in _MOVES for r in op.results)


def _bf16_only_moved(func: ir.Operation, holds=_holds_bf16) -> bool:
    """Whether ``func`` has bf16 values and only moves them.

    Where every bf16 op is a move, every bf16 value is some move's result (or
    a block argument fed by one), so the moves' results alone tell whether
    there is bf16 at all: a function without any (an f32 program's every
    function) costs one look at those and no retyping walk."""
    if "bf16" in str(func.attributes["function_type"]):
        return False
    ops = nested_ops(func)
    if not _moves_bf16(ops, holds):
        return False
    return all(op.name in _MOVES or not any(holds(v.type) for v in (*op.operands, *op.results))
               for op in ops)


def _retype(func: ir.Operation) -> None:
    for op in nested_ops(func):
        for region in op.regions:
            for block in region.blocks:
                _retype_values(block.arguments)
        if op.name == "llvm.mlir.constant" and _as_i16(op.results[0].type) is not None:
            _constant_as_bits(op)
        else:
            _retype_values(op.results)
    for region in func.regions:
        for block in region.blocks:
            _retype_values(block.arguments)
    for op in nested_ops(func):               # i16 -> i16 bitcasts left behind
        if op.name == "llvm.bitcast" and op.operands[0].type == op.results[0].type:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()


def _retype_values(values) -> None:
    for value in values:
        new = _as_i16(value.type)
        if new is not None:
            value.set_type(new)


def _constant_as_bits(op: ir.Operation) -> None:
    """A bf16 constant becomes an i16 constant of the same bits. A scalar's or
    a vector's users could read it through a bitcast, but an array of vectors
    (a 2-D vector's initial value, as a bf16 convolution's register tiles
    start from) cannot be bitcast in LLVM: the module was invalid."""
    bits = ir.Operation.create(
        "llvm.mlir.constant", results=[_as_i16(op.results[0].type)], loc=op.location,
        attributes={"value": _bits_attribute(op.attributes["value"])},
        ip=ir.InsertionPoint.after(op))
    op.results[0].replace_all_uses_with(bits.results[0])
    op.erase()


_FLOAT_TOKEN = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?)")


def _bits_attribute(value: ir.Attribute) -> ir.Attribute:
    """``value`` (bf16, or a dense bf16 vector) as i16 with the same bits.
    The printed form is parsed: the bindings read no bf16 elements."""
    text = str(value)
    if "dense<" not in text:
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(16), _bf16_bits(text.split(":")[0]))
    body, kind = text[len("dense<"):].rsplit("> :", 1)
    if not body.startswith('"0x'):           # hex is the raw little-endian data already
        bits = [_bf16_bits(t) for t in _FLOAT_TOKEN.findall(body)]
        body = '"0x' + struct.pack(f"<{len(bits)}H", *bits).hex().upper() + '"'
    return ir.Attribute.parse(f"dense<{body}> :{kind.replace('bf16', 'i16')}")


def _bf16_bits(token: str) -> int:
    """The 16 bits of one printed bf16: hex is its bits already; a decimal is
    exact in f32, whose upper half it is."""
    token = token.strip()
    if token.startswith("0x"):
        return int(token, 16)
    # struct, not numpy: a piece worker runs this pass without numpy (its start-up)
    return struct.unpack("<I", struct.pack("<f", float(token)))[0] >> 16
