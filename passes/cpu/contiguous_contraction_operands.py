"""xla-contiguous-contraction-operands: a matmul's strided operand view -> a copy of its own."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

_MATMULS = ("linalg.matmul", "linalg.batch_matmul")
_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


class ContiguousContractionOperands(ModulePass):
    """Copy (an identity ``linalg.generic`` into a ``tensor.empty``) each input
    of a ``linalg.matmul``/``batch_matmul`` that is a view whose rows have gaps
    between neighbouring elements: a ``tensor.extract_slice`` (through
    reshapes) of a minor dim, or with a step along its innermost dim. A
    view of whole rows or of a block of columns (gaps between rows only:
    the schedules' packing reads those rows as they are) stays a view.

    Why: a complex dot split into four real ones (xla-split-complex-contractions)
    reads its parts as views of the pairs (xla-complex-as-pairs: real part =
    every second f32). The matmul schedules' loads and packing then read with a
    stride of 2: at x86-64-v4 each 16-lane load became a gather and the
    315x420x210 c64 matmul took 46-99 ms against XLA's 4-9 ms (x86-64-v3:
    14-38 ms). A copy per part costs one pass over the operand (O(mk), the
    matmul O(mkn)) and the schedules read it contiguously. Sums unchanged: bit
    identical. Runs on tensors, after xla-normalize-contractions:

        %v = tensor.extract_slice %pairs[0, 0, 0] [m, k, 1] [1, 1, 1]
        %a = tensor.collapse_shape %v [[0], [1, 2]]      %c = linalg.copy ins(%a) outs(tensor.empty)
        linalg.matmul ins(%a, %b) ...               ->  linalg.matmul ins(%c, %b) ...
    """

    name = "xla-contiguous-contraction-operands"

    acts_on = frozenset(_MATMULS)

    def run(self, module: ir.Operation) -> None:
        copies: dict = {}                      # one copy of a view however many matmuls read it
        for op in module_ops(module):
            if op.name in _MATMULS:
                for index in range(len(op.operands) - 1):          # the inputs, not the init
                    view = op.operands[index]
                    if _strided_view(view):
                        if view not in copies:
                            copies[view] = _elementwise_copy(view)
                        op.operands[index] = copies[view]


def _elementwise_copy(view: ir.Value) -> ir.Value:
    """``view`` copied by an identity linalg.generic right after it is made:
    the elementwise schedules vectorize it (a linalg.copy has no plan: scalar loops)."""
    tensor = ir.RankedTensorType(view.type)
    rank = tensor.rank
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))
    parallel = ir.Attribute.parse(f"[{', '.join(['#linalg.iterator_type<parallel>'] * rank)}]")
    after = view.owner.operation
    with after.context, after.location, ir.InsertionPoint.after(after):
        empty = ir.Operation.create("tensor.empty", results=[tensor])
        copy = ir.Operation.create(
            "linalg.generic", results=[tensor], operands=[view, empty.result], regions=1,
            attributes={"indexing_maps": ir.ArrayAttr.get([identity, identity]),
                        "iterator_types": parallel,
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])})
        element = tensor.element_type
        body = copy.regions[0].blocks.append(element, element)
        with ir.InsertionPoint(body):
            ir.Operation.create("linalg.yield", operands=[body.arguments[0]])
    return copy.result


def _strided_view(value: ir.Value) -> bool:
    """Whether ``value`` is a slice (through reshapes) with gaps inside its rows."""
    owner = value.owner
    while not isinstance(owner, ir.Block) and owner.name in _RESHAPES:
        owner = owner.operands[0].owner
    if isinstance(owner, ir.Block) or owner.name != "tensor.extract_slice":
        return False
    source = ir.RankedTensorType(owner.operands[0].type)
    sizes = list(ir.DenseI64ArrayAttr(owner.attributes["static_sizes"]))
    strides = list(ir.DenseI64ArrayAttr(owner.attributes["static_strides"]))
    return not _adjacent_minor(list(source.shape), sizes, strides)


def _adjacent_minor(shape: list[int], sizes: list[int], strides: list[int]) -> bool:
    """Whether neighbours along the innermost dim of a slice (``sizes`` >
    1; ``strides`` its steps) of a row-major ``shape`` are neighbours in memory."""
    inner = [d for d, size in enumerate(sizes) if size != 1]
    if not inner:
        return True
    d = inner[-1]
    return strides[d] == 1 and all(extent == 1 for extent in shape[d + 1:])
