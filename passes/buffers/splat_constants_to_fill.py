"""xla-splat-constants-to-fill: large splat tensor constants as linalg.fill."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.record import record


@record
class SplatConstantsToFill(ModulePass):
    """Replace each splat `arith.constant` tensor of more than `min-elements`
    elements by a `linalg.fill` of its one value into a `tensor.empty`.

    Why: bufferization turns a tensor constant into a `memref.global` with
    every element written out, and LLVM materializes it in the object code:
    `stablehlo.constant dense<1.0> : tensor<10000x10000xf32>` took 23 s and
    6.2 GB to compile into a 400 MB constant. A fill is a loop (scheduled:
    threads and vectors like any other), a few bytes of code. Small splats
    stay constants: reading them costs nothing.

        %c = arith.constant dense<1.0> : tensor<1000x1000xf32>
      ->
        %one = arith.constant 1.0 : f32
        %e = tensor.empty() : tensor<1000x1000xf32>
        %c = linalg.fill ins(%one : f32) outs(%e : tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
    """

    name = "xla-splat-constants-to-fill"
    min_elements: int = 1024

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "arith.constant" and self._large_splat(op):
                _replace_with_fill(op)

    def _large_splat(self, op: ir.Operation) -> bool:
        tensor = op.results[0].type
        if not isinstance(tensor, ir.RankedTensorType) or not tensor.has_static_shape:
            return False
        element = tensor.element_type   # first: the bindings cannot read a complex constant
        if not isinstance(element, (ir.IntegerType, ir.FloatType, ir.IndexType)):
            return False
        value = op.attributes["value"]
        return (isinstance(value, ir.DenseElementsAttr) and value.is_splat
                and _count(tensor.shape) > self.min_elements)


def _count(shape) -> int:
    total = 1
    for dim in shape:
        total *= dim
    return total


def _replace_with_fill(op: ir.Operation) -> None:
    tensor = op.results[0].type
    splat = ir.DenseElementsAttr(op.attributes["value"]).get_splat_value()
    with ir.InsertionPoint(op), op.location:
        scalar = ir.Operation.create("arith.constant", results=[tensor.element_type],
                                     attributes={"value": splat}).result
        empty = ir.Operation.create("tensor.empty", results=[tensor], operands=[]).result
        fill = ir.Operation.create(
            "linalg.fill", results=[tensor], operands=[scalar, empty], regions=1,
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])})
        block = fill.regions[0].blocks.append(tensor.element_type, tensor.element_type)
        with ir.InsertionPoint(block):
            ir.Operation.create("linalg.yield", operands=[block.arguments[0]])
    op.results[0].replace_all_uses_with(fill.result)
    op.erase()
