"""xla-constant-arguments-to-globals: the entry's constant arguments read from
external globals, which the compiler defines with their bytes."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, public_definitions
from xlac.signature import ARGUMENT_ATTR, CONSTANT_ALIGNMENT, CONSTANTS_ATTR, constant_symbol


class ConstantArgumentsToGlobals(ModulePass):
    """Replace each argument of the entry marked `{xla.constant = i}` (made by
    xla-constants-to-arguments) by a `memref.get_global` of an external,
    constant `memref.global @__xlac_constant_i` with no value, and drop it
    from the entry's signature.

    Why: the caller passes the program's own arguments only, as before (the
    bare-pointer ABI, a C library's `prefix_main(inputs, outputs)`); the
    compiler resolves each symbol to the constant's bytes, which never pass
    through LLVM: a JIT symbol of the function's own array, the read-only data
    of an artifact's library. The values stay in `xla.constant_arguments`.

        func.func @main(%x: memref<64xf32>, %w: memref<64xf32> {xla.constant = 0}, %out: ...)
      ->
        memref.global constant @__xlac_constant_0 : memref<64xf32> {alignment = 64}
        func.func @main(%x: memref<64xf32>, %out: ...) {
          %w = memref.get_global @__xlac_constant_0 : memref<64xf32>
    """

    name = "xla-constant-arguments-to-globals"

    def run(self, module: ir.Operation) -> None:
        expected = len(ir.ArrayAttr(module.attributes[CONSTANTS_ATTR])) \
            if CONSTANTS_ATTR in module.attributes else 0
        found = sum(_rewrite(func) for func in public_definitions(module))
        if found != expected:
            raise PassFailure(module.location, f"{expected} constant argument(s) listed in "
                              f"{CONSTANTS_ATTR}, {found} found on the entry: a pass dropped "
                              f"their {ARGUMENT_ATTR} marks")


def _rewrite(func: ir.Operation) -> int:
    """Rewrite ``func``'s constant arguments; how many it had."""
    if "arg_attrs" not in func.attributes:
        return 0
    marks = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
    block = func.regions[0].blocks[0]
    constant = [k for k, mark in enumerate(marks) if ARGUMENT_ATTR in ir.DictAttr(mark)]
    for k in constant:
        argument = block.arguments[k]
        symbol = constant_symbol(ir.IntegerAttr(ir.DictAttr(marks[k])[ARGUMENT_ATTR]).value)
        _declare(symbol, argument.type, func)
        with ir.InsertionPoint.at_block_begin(block), argument.location:
            value = ir.Operation.create("memref.get_global", results=[argument.type],
                                        attributes={"name": ir.FlatSymbolRefAttr.get(symbol)})
        argument.replace_all_uses_with(value.result)
    for k in reversed(constant):
        block.erase_argument(k)
        del marks[k]
    old = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs = [a.type for a in block.arguments]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, old.results))
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(marks)
    return len(constant)


def _declare(symbol: str, memref: ir.Type, before: ir.Operation) -> None:
    """An external constant ``memref.global`` of type ``memref``, before ``before``."""
    with ir.InsertionPoint(before), before.location:
        ir.Operation.create("memref.global", attributes={
            "sym_name": ir.StringAttr.get(symbol),
            "type": ir.TypeAttr.get(memref),
            "constant": ir.UnitAttr.get(),
            "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), CONSTANT_ALIGNMENT)})
