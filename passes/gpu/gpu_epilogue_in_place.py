"""xla-gpu-epilogue-in-place: a matmul's elementwise epilogue writes the matmul's result."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.gpu.conv_epilogue_rows import collapse_epilogue
from xlac.record import record

_MATMULS = ("linalg.matmul", "linalg.batch_matmul")


@record
class GpuEpilogueInPlace(ModulePass):
    """Before bufferization, make an elementwise `linalg.generic` that reads a
    matmul's result C (its only reader, at the output's own index) write C:
    its init becomes C, whose old value it never reads.

    Why: the epilogue's init is whatever tensor fusion left (an empty tensor
    shared with other ops), and one-shot bufferization then puts a chain of
    layers in one buffer: the MLP's second bias + relu wrote the buffer its
    matmul read as A, which other blocks of the matmul kernel still read, so
    the epilogue could not run in the matmul's kernel. Written into C, it is
    the in-place epilogue `xla-gpu-matmul-kernels` applies to each output
    before it is stored: one kernel per fusion.

        %c = linalg.matmul ins(%a, %b) outs(%z)
        %r = linalg.generic ins(%c, %bias) outs(%empty) {...}
      ->
        %r = linalg.generic ins(%c, %bias) outs(%c) {...}

    A convolution's matmul (xla-gpu-convolutions-as-matmuls) is read through
    the `tensor.expand_shape` back to the convolution's shape: its epilogue
    (ResNet's batch norm) writes that view, so the result stays one buffer (a
    fresh one each made ResNet-18 hold 12 MB more at batch 2). Unless
    ``library``, it is first rewritten on the matmul's 2-D result
    (`conv_epilogue_rows.py`), which it then writes: the generated matmul
    kernel runs it. cuBLASLt runs no batch norm: there it stays on the view,
    where `xla-gpu-results-in-slices{library=true}` can move it into a padded
    buffer.
    """

    name = "xla-gpu-epilogue-in-place"
    library: bool = False           # matmuls go to cuBLASLt (xla-gpu-library-matmuls)

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            if op.name == "linalg.generic":
                _write_into_matmul_result(op, not self.library)


def _write_into_matmul_result(op: ir.Operation, on_rows: bool) -> None:
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    iterators = [str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
    if len(op.results) != 1 or any("parallel" not in t for t in iterators):
        return
    block = op.regions[0].blocks[0]
    if list(block.arguments[len(block.arguments) - 1].uses):
        return                                   # the body reads the init: not elementwise
    output_map = maps[-1]
    if not output_map.is_permutation or str(output_map) != str(
            ir.AffineMap.get_identity(output_map.n_dims)):
        return
    init = len(op.operands) - 1
    for index in range(init):
        value = op.operands[index]
        conv = _matmul_behind_reshape(value)
        owner = conv or value.owner
        if isinstance(owner, ir.OpView) and owner.name in _MATMULS \
                and value.type == op.results[0].type and str(maps[index]) == str(output_map) \
                and len(list(value.uses)) == 1:
            if conv is not None and on_rows and collapse_epilogue(op, value, conv):
                return
            op.operands[init] = value
            return


def _matmul_behind_reshape(value: ir.Value) -> ir.OpView | None:
    """The convolution's matmul ``value`` expands (read by nothing else), or None."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.name != "tensor.expand_shape":
        return None
    matmul = owner.operands[0].owner
    if isinstance(matmul, ir.OpView) and matmul.name in _MATMULS and "xla.conv" in matmul.attributes \
            and len(list(owner.operands[0].uses)) == 1:
        return matmul
    return None
