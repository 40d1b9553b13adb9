"""xla-i1-memory-as-i8: vectors of i1 move through memory as bytes."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

# op -> (index of the value it writes or None, whether its result is read from memory)
_MOVES = {"llvm.load": (None, True), "llvm.intr.masked.load": (None, True),
          "llvm.intr.masked.gather": (None, True), "llvm.store": (0, False),
          "llvm.intr.masked.store": (0, False), "llvm.intr.masked.scatter": (0, False)}
_PASS_THROUGH = ("llvm.intr.masked.load", "llvm.intr.masked.gather")   # operand 2: lanes not read


class I1MemoryAsI8(ModulePass):
    """Every vector load, store, gather or scatter of i1 lanes reads or writes
    i8 lanes, converted with a trunc (read) or a zext (written).

    Why: a bool tensor is a byte per element in memory (numpy's, and a memref
    of i1: LLVM gives an i1 one byte), but LLVM packs a vector of i1 in
    memory as bits, so a `vector<16xi1>` load of a predicate would read two
    bytes as 16 bits. Without this the vector schedules could not take i1
    tensors (a select's predicate, a comparison's result): those ran as
    scalar loops. Scalar i1 loads and stores already move one byte. Run on
    the LLVM dialect, after the vectors are lowered.

        %m = llvm.load %p : !llvm.ptr -> vector<8xi1>
      ->
        %b = llvm.load %p : !llvm.ptr -> vector<8xi8>
        %m = llvm.trunc %b : vector<8xi8> to vector<8xi1>
    """

    name = "xla-i1-memory-as-i8"

    def run(self, module: ir.Operation) -> None:
        with ir.Location.unknown(module.context):
            for op in module_ops(module):
                if op.name in _MOVES and _moves_i1_vector(op):
                    _as_bytes(op)


def _i1_vector(type_: ir.Type) -> bool:
    return isinstance(type_, ir.VectorType) and ir.VectorType(type_).element_type == \
        ir.IntegerType.get_signless(1)


def _bytes_of(type_: ir.Type) -> ir.Type:
    return ir.VectorType.get(ir.VectorType(type_).shape, ir.IntegerType.get_signless(8))


def _moves_i1_vector(op: ir.Operation) -> bool:
    written, reads = _MOVES[op.name]
    value = op.results[0] if reads else op.operands[written]
    return _i1_vector(value.type)


def _as_bytes(op: ir.Operation) -> None:
    written, reads = _MOVES[op.name]
    point = ir.InsertionPoint(op)
    operands = list(op.operands)
    widen = [written] if written is not None else []
    if op.name in _PASS_THROUGH and len(operands) > 2:
        widen.append(2)
    for index in widen:
        operands[index] = _cast("llvm.zext", operands[index], _bytes_of(operands[index].type),
                                point, op.location)
    attributes = {named.name: named.attr
                  for named in (op.attributes[i] for i in range(len(op.attributes)))}
    results = [_bytes_of(op.results[0].type)] if reads else []
    moved = ir.Operation.create(op.name, results=results, operands=operands,
                                attributes=attributes, ip=point, loc=op.location)
    if reads:
        lanes = _cast("llvm.trunc", moved.results[0], op.results[0].type, point, op.location)
        op.results[0].replace_all_uses_with(lanes)
    op.erase()


def _cast(name: str, value: ir.Value, to: ir.Type, point: ir.InsertionPoint,
          location: ir.Location) -> ir.Value:
    return ir.Operation.create(name, results=[to], operands=[value], ip=point,
                               loc=location).results[0]
