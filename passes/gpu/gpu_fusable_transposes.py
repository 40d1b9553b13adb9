"""xla-gpu-fusable-transposes: a transpose next to an elementwise loop nest as a
linalg.generic, which elementwise fusion can fold together with it (cuda)."""

from __future__ import annotations

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.gpu.transpose_reshapes import split_generic


class GpuFusableTransposes(ModulePass):
    """Rewrite `linalg.transpose` on tensors into the equivalent all-parallel
    `linalg.generic` when its input is made by a `linalg.generic` read by nothing
    else (maybe through reshapes read by nothing else), or when every reader of
    it is a `linalg.generic`. A single-use generic split into heads
    (`tensor.expand_shape`) for the transpose alone is first computed on the
    split shape (transpose_reshapes.py), so that the transpose reads it directly:
    BERT's and ViT's key and value heads, transposed for the batch matmuls, are
    then written transposed by their bias add's kernel.

    Why: upstream elementwise fusion fuses generics only, so `q * scale`
    followed by the transpose that splits attention heads was two kernels,
    and so was a transpose whose one reader is a copy. As a generic (with the
    input map permuted) the transpose fuses with its neighbour: one kernel,
    which the shared-memory transpose kernels still emit coalesced. Transposes
    between a matmul and a matmul stay named ops: the matmul kernels read
    them in place, without a kernel. Example:

        %t = linalg.transpose ins(%s : tensor<4x197x3x64xf32>) outs(%e : tensor<4x3x197x64xf32>)
               permutation = [0, 2, 1, 3]
        ->  %t = linalg.generic {indexing_maps = [(d0, d1, d2, d3) -> (d0, d2, d1, d3),
                                                  (d0, d1, d2, d3) -> (d0, d1, d2, d3)],
                                 iterator_types = [parallel x 4]} ins(%s) outs(%e) { yield %in }
    """

    name = "xla-gpu-fusable-transposes"
    acts_on = frozenset({"linalg.transpose"})

    def run(self, module: ir.Operation) -> None:
        # listed first: the rewrites erase ops (and their regions) the walk would visit
        for op in [op for op in nested_ops(module) if op.name == "linalg.transpose"]:
            if op.results:
                _split_before(op)
                if _next_to_a_generic(op):
                    _as_generic(op)


def _split_before(transpose) -> None:
    """A single-use generic split into heads for ``transpose`` alone: the generic
    computed on the split shape, so that the transpose reads it directly."""
    split = transpose.operands[0]
    if _single_use_result_of(split, {"tensor.expand_shape"}) and \
            _single_use_result_of(split.owner.operands[0], {"linalg.generic"}):
        split_generic(split.owner)


RESHAPES = frozenset({"tensor.expand_shape", "tensor.collapse_shape"})


def _next_to_a_generic(transpose) -> bool:
    source = transpose.operands[0]
    # through reshapes read by nothing else: the key and value projections' bias add,
    # split into heads by an expand_shape, then transposed for the batch matmul
    while _single_use_result_of(source, RESHAPES):
        source = source.owner.operands[0]
    made_by_generic = _single_use_result_of(source, {"linalg.generic"})
    readers = [use.owner for use in transpose.results[0].uses]
    return made_by_generic or (bool(readers) and all(r.name == "linalg.generic" for r in readers))


def _single_use_result_of(value, names) -> bool:
    return (isinstance(value, ir.OpResult) and value.owner.name in names
            and len(list(value.uses)) == 1)


def _as_generic(transpose) -> None:
    linalg = dialect("linalg")
    source, init = transpose.operands[0], transpose.operands[1]
    permutation = list(ir.DenseI64ArrayAttr(transpose.attributes["permutation"]))
    rank = len(permutation)
    # output dim i is input dim permutation[i]: input dim j is read at loop dim i
    read_at = [0] * rank
    for i, j in enumerate(permutation):
        read_at[j] = i
    with ir.InsertionPoint(transpose), transpose.location:
        dims = [ir.AffineDimExpr.get(d) for d in range(rank)]
        maps = [ir.AffineMap.get(rank, 0, [dims[d] for d in read_at]), ir.AffineMap.get_identity(rank)]
        parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
        generic = linalg.GenericOp([init.type], [source], [init], ir.ArrayAttr.get(
            [ir.AffineMapAttr.get(m) for m in maps]), ir.ArrayAttr.get([parallel] * rank))
        element = ir.RankedTensorType(init.type).element_type
        block = generic.regions[0].blocks.append(element, element)
        with ir.InsertionPoint(block):
            linalg.YieldOp([block.arguments[0]])
    transpose.results[0].replace_all_uses_with(generic.results[0])
    transpose.erase()
