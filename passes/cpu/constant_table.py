"""xla-constant-table: the code reads its large constants' addresses from one
table of pointers, filled when the code is loaded."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, forget_module_ops, module_ops
from xlac.signature import CONSTANT_TABLE_SYMBOL, CONSTANTS_ATTR, constant_index


class ConstantTable(ModulePass):
    """Replace each `llvm.mlir.addressof @__xlac_constant_i` (an external
    global made by xla-constant-arguments-to-globals) by a load of entry `i`
    of the external constant table `@__xlac_constant_table` (one pointer per
    entry of `xla.constant_arguments`), and drop those globals.

    Why: a symbol per constant must be defined where the code is linked, so
    a library built to run a program in this process (its pieces, the
    compilation cache's entry) had every weight byte linked into it (`.incbin`,
    about a second for ResNet-18's 47 MB). A table is filled at load time
    from buffers the executable owns: the JIT's arrays, the bytes a cache
    entry or a serialized executable carries beside its code; an
    `xla-compile` library defines it over the data it links. The table is
    written before the code first runs and never after, so its loads are
    invariant. Run on the LLVM dialect.

        llvm.mlir.global external constant @__xlac_constant_1() {alignment = 64 : i64} : !llvm.array<64 x f32>
        %w = llvm.mlir.addressof @__xlac_constant_1 : !llvm.ptr
      ->
        llvm.mlir.global external constant @__xlac_constant_table() {alignment = 8 : i64} : !llvm.array<2 x ptr>
        %t = llvm.mlir.addressof @__xlac_constant_table : !llvm.ptr
        %e = llvm.getelementptr %t[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
        %w = llvm.load %e invariant : !llvm.ptr -> !llvm.ptr
    """

    name = "xla-constant-table"
    keeps_ops = True                     # unless it rewrote something (then it says so)

    def run(self, module: ir.Operation) -> None:
        globals_ = {symbol: op for op in module.regions[0].blocks[0].operations
                    if op.name == "llvm.mlir.global"
                    and (symbol := ir.StringAttr(op.attributes["sym_name"]).value)
                    and constant_index(symbol) is not None}
        if not globals_:
            return
        if CONSTANTS_ATTR not in module.attributes:
            raise PassFailure(module.location, f"constant globals without {CONSTANTS_ATTR}: "
                              "xla-constant-arguments-to-globals did not make them")
        count = len(ir.ArrayAttr(module.attributes[CONSTANTS_ATTR]))
        first = next(iter(globals_.values()))
        with first.location:
            _declare_table(count, first)
            for op in module_ops(module):
                if op.name == "llvm.mlir.addressof":
                    symbol = ir.FlatSymbolRefAttr(op.attributes["global_name"]).value
                    if symbol in globals_:
                        _read_from_table(op, constant_index(symbol))
        for op in globals_.values():
            op.erase()
        forget_module_ops()


def _declare_table(count: int, before: ir.Operation) -> None:
    with ir.InsertionPoint(before):
        ir.Operation.create("llvm.mlir.global", regions=1, attributes={
            "sym_name": ir.StringAttr.get(CONSTANT_TABLE_SYMBOL),
            "global_type": ir.TypeAttr.get(ir.Type.parse(f"!llvm.array<{count} x ptr>")),
            "linkage": ir.Attribute.parse("#llvm.linkage<external>"),
            "constant": ir.UnitAttr.get(),
            "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 8),
            "addr_space": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0)})


def _read_from_table(op: ir.Operation, index: int) -> None:
    pointer = ir.Type.parse("!llvm.ptr")
    point = ir.InsertionPoint(op)
    table = ir.Operation.create("llvm.mlir.addressof", results=[pointer], ip=point, loc=op.location,
                                attributes={"global_name":
                                            ir.FlatSymbolRefAttr.get(CONSTANT_TABLE_SYMBOL)})
    entry = ir.Operation.create(
        "llvm.getelementptr", results=[pointer], operands=[table.result], ip=point,
        loc=op.location, attributes={
            "rawConstantIndices": ir.Attribute.parse(f"array<i32: {index}>"),
            "elem_type": ir.TypeAttr.get(pointer)})
    loaded = ir.Operation.create("llvm.load", results=[pointer], operands=[entry.result],
                                 ip=point, loc=op.location, attributes={
                                     "alignment": ir.IntegerAttr.get(
                                         ir.IntegerType.get_signless(64), 8),
                                     "ordering": ir.IntegerAttr.get(
                                         ir.IntegerType.get_signless(64), 0),    # not atomic
                                     "invariant": ir.UnitAttr.get()})
    op.result.replace_all_uses_with(loaded.result)
    op.erase()
