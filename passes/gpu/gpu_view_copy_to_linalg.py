"""xla-gpu-view-copy-to-linalg: copies from or into offset views as linalg.copy (cuda)."""

from __future__ import annotations

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, nested_ops


class GpuViewCopyToLinalg(ModulePass):
    """Rewrite `memref.copy` whose operands are not plain buffers into `linalg.copy`.

    Why: the CUDA host schedule copies device to device with one memcpy from
    a buffer's base pointer, so a view with an offset (a slice, a
    dynamic_slice's clamped window) would copy the wrong bytes. As
    linalg.copy the copy becomes a kernel, which applies the view's offset
    itself. Copies between identity-layout buffers stay memcpys. Example:

        memref.copy %view, %out : memref<1xf32, strided<[1], offset: ?>> to memref<1xf32>
        ->  linalg.copy ins(%view : ...) outs(%out : memref<1xf32>)
    """

    name = "xla-gpu-view-copy-to-linalg"

    def run(self, module: ir.Operation) -> None:
        linalg = dialect("linalg")

        for op in nested_ops(module):
            if op.name != "memref.copy" or all(_plain(v.type) for v in op.operands):
                continue
            with ir.InsertionPoint(op), op.location:
                linalg.copy(op.operands[0], outs=[op.operands[1]])
            op.erase()


def _plain(memref_type) -> bool:
    """Row-major contiguous from offset 0: the bytes a memcpy of the base pointer moves."""
    memref = ir.MemRefType(memref_type)
    strides, offset = memref.get_strides_and_offset()
    expected, running = [], 1
    for size in reversed(memref.shape):
        expected.append(running)
        running *= size
    return offset == 0 and list(strides) == expected[::-1]
