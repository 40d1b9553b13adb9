"""xla-empty-entry-buffers: zero-element entry buffers as plain memref<0xT>."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, public_definitions


class EmptyEntryBuffers(ModulePass):
    """Pass zero-element buffers to public functions as `memref<0xT>`.

    Why: convert-func-to-llvm's bare-pointer convention needs static strides,
    and MLIR derives none for a shape with a 0 after the first dimension
    (`memref<2x0x1xf32>`), so the whole entry silently stays `func.func` and
    the JIT rejects it. Such a buffer holds no data: the body can use an empty
    local buffer (`memref.alloca`, zero bytes) of the same type, and the
    argument becomes `memref<0xT>`, still one pointer in the ABI. Example:

        func.func public @main(%arg1: memref<2x0x1xf32>) { ... %arg1 ... }
      becomes
        func.func public @main(%arg1: memref<0xf32>) {
          %0 = memref.alloca() : memref<2x0x1xf32>  ... %0 ...
    """

    name = "xla-empty-entry-buffers"

    def run(self, module: ir.Operation) -> None:
        for func in public_definitions(module):
            with func.location:
                _rewrite_arguments(func)


def _needs_rewrite(t: ir.Type) -> bool:
    # A leading 0 still has canonical strides (memref<0x3xf32> converts fine).
    return isinstance(t, ir.MemRefType) and 0 in t.shape[1:]


def _rewrite_arguments(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    changed = False
    for argument in block.arguments:
        if _needs_rewrite(argument.type):
            with ir.InsertionPoint.at_block_begin(block):
                local = ir.Operation.create("memref.alloca", results=[argument.type],
                                            operands=[], attributes={
                                                "operandSegmentSizes":
                                                    ir.DenseI32ArrayAttr.get([0, 0])}).result
            argument.replace_all_uses_with(local)
            argument.set_type(ir.MemRefType.get([0], argument.type.element_type))
            changed = True
    if changed:
        old = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        new = ir.FunctionType.get([a.type for a in block.arguments], old.results)
        func.attributes["function_type"] = ir.TypeAttr.get(new)
