"""xla-gpu-share-conv-scratch: the im2col scratch of every convolution one buffer.

xla-gpu-convolutions-as-matmuls gives each convolution's patch matrix a
`tensor.empty`, which bufferization makes an allocation of its own; the cuda
runtime allocates every buffer of the schedule once, for the program's life,
so the scratch of all convolutions was held at once (ResNet-18 at batch 2:
130 MB of patches for 20 convolutions, the largest 14 MB). Each patch matrix
is written by its im2col kernel and read by the matmul right after it, both on
the program's one stream, so one buffer the size of the largest serves all:
here each is made a `memref.reinterpret_cast` of a shared allocation (one per
element type, and one more for 1x1 windows: a downsampling block's strided 1x1
shortcut reads the input its first 3x3 convolution reads, and with a scratch of
its own the two im2cols are independent and run as one launch,
xla-gpu-horizontal-launches), at the start of the function.
"""

from __future__ import annotations

import re

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions
from xlac.passes.gpu.conv_gemm_text import ELEMENT_BYTES

ORIGIN = "xla.conv"


class GpuShareConvScratch(ModulePass):
    """Point the im2col scratch buffers of a function's convolutions (their matmuls
    marked `xla.conv`) into one allocation per element type, the size of the largest."""

    name = "xla-gpu-share-conv-scratch"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            if func.regions[0].blocks:
                _share(func.regions[0].blocks[0])


def _share(block: ir.Block) -> None:
    by_element: dict[tuple[str, bool], list[ir.Operation]] = {}
    for op in block.operations:
        scratch = _scratch_of(op.operation)
        if scratch is not None:
            element = str(ir.MemRefType(scratch.results[0].type).element_type)
            by_element.setdefault((element, _one_tap(op.operation)), []).append(scratch)
    for allocs in by_element.values():
        if len(allocs) < 2:
            continue                                  # one scratch: nothing to share
        size = max(_elements(a) for a in allocs)
        # at the block's start as it is now: an earlier group may have erased its first op
        with ir.InsertionPoint.at_block_begin(block), allocs[0].location:
            shared = ir.Operation.create(
                "memref.alloc", results=[ir.MemRefType.get([size], allocs[0].results[0].type.element_type)],
                attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0]),
                            "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64)})
        for alloc in allocs:
            _view_of(shared, alloc)


def _scratch_of(op: ir.Operation) -> ir.Operation | None:
    """The allocation holding the patch matrix a convolution's matmul reads (through a
    collapse), if it is this block's and nothing but the im2col writes and the collapse reads it."""
    if op.name != "linalg.matmul" or ORIGIN not in op.attributes \
            or not ir.StringAttr(op.attributes[ORIGIN]).value.endswith("im2col"):
        return None
    collapse = op.operands[0].owner
    if isinstance(collapse, ir.Block) or collapse.name != "memref.collapse_shape" \
            or [u.owner for u in collapse.results[0].uses] != [op]:
        return None
    alloc = collapse.operands[0].owner
    if isinstance(alloc, ir.Block) or alloc.name != "memref.alloc" or alloc.operation.parent != op.parent \
            or str(ir.MemRefType(alloc.results[0].type).element_type) not in ELEMENT_BYTES:
        return None
    users = [u.owner for u in alloc.results[0].uses]
    writers = [u for u in users if u != collapse.operation and u.name == "linalg.generic"]
    return alloc.operation if len(users) == 2 and len(writers) == 1 else None


def _one_tap(matmul: ir.Operation) -> bool:
    """A 1x1 window's patch matrix (a strided shortcut's): in a scratch apart from
    the larger windows', so that a block's shortcut and first convolution, which
    read the same input, do not share one and can run side by side."""
    return re.match(r"conv1(x1)*[/ ]", ir.StringAttr(matmul.attributes[ORIGIN]).value) is not None


def _elements(alloc: ir.Operation) -> int:
    count = 1
    for dim in ir.MemRefType(alloc.results[0].type).shape:
        count *= dim
    return count


def _view_of(shared: ir.Operation, alloc: ir.Operation) -> None:
    """``alloc`` replaced by its shape over the start of ``shared``."""
    memref = ir.MemRefType(alloc.results[0].type)
    strides, _ = memref.get_strides_and_offset()
    with ir.InsertionPoint(alloc), alloc.location:
        view = ir.Operation.create(
            "memref.reinterpret_cast", results=[memref], operands=[shared.results[0]],
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
                        "static_offsets": ir.DenseI64ArrayAttr.get([0]),
                        "static_sizes": ir.DenseI64ArrayAttr.get(list(memref.shape)),
                        "static_strides": ir.DenseI64ArrayAttr.get(list(strides))})
    alloc.results[0].replace_all_uses_with(view.results[0])
    alloc.erase()
