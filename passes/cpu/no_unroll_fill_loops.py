"""xla-no-unroll-fill-loops: LLVM leaves the loops that fill memory rolled."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops, nested_ops

# Reads, and math on vectors: a loop with any of these is no fill.
_READS = ("vector.transfer_read", "vector.load", "vector.maskedload", "vector.gather",
          "memref.load")
_TILE_OPS = ("vector.contract", "vector.fma", "vector.outerproduct")


class NoUnrollFillLoops(ModulePass):
    """Mark each `scf.for` that only stores vectors it reads from nowhere
    (the zeroing of a matmul's or convolution's output, a padded buffer's
    border) not to be unrolled by LLVM (`llvm.loop_annotation`, which
    convert-scf-to-cf puts on the loop's back edge).

    Why: LLVM -O3 unrolled these nests completely (ResNet-18's 3x3
    convolutions zero 2 x 14 x 14 x 32 floats a chunk: 392 stores), which
    bought nothing a store-bound loop could use and multiplied the code it
    then selects instructions for: such a kernel took 0.15 s of machine
    code, 0.09 s with its fill rolled; ResNet-18 compiled in 1.28 s instead
    of 1.76, its run 1% slower or not at all. Rolling more was measured and
    not taken: also the loops of register tiles and of packing copies cost
    ViT and the CNN training step 4-7% of their run time.

    Example:
        scf.for %i = %c0 to %c14 step %c1 { vector.transfer_write %zero, ... }
    becomes
        scf.for %i = ... { ... } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    """

    name = "xla-no-unroll-fill-loops"

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "scf.for" and _fills(op):
                keep_rolled(op)


def keep_rolled(loop: ir.Operation) -> None:
    """Mark ``loop`` for LLVM not to unroll (xla-loop-annotations-to-llvm passes it on)."""
    loop.attributes["llvm.loop_annotation"] = ir.Attribute.parse(
        "#llvm.loop_annotation<unroll = <disable = true>>", loop.context)


def _fills(loop: ir.Operation) -> bool:
    """Whether ``loop`` stores vectors and reads or computes none."""
    writes = False
    for op in nested_ops(loop):
        name = op.name
        if name == "vector.transfer_write":
            writes = True
        elif name in _READS or name in _TILE_OPS or (
                name.startswith(("arith.", "math.")) and any(
                    isinstance(r.type, ir.VectorType) for r in op.results)):
            return False
    return writes
