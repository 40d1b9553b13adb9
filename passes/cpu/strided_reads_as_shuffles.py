"""xla-strided-reads-as-shuffles: a 1-D vector read of every s-th element, one load and a shuffle."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.cpu.strided_minor_reads import MAX_STRIDE, contiguous_read

# set on the shuffles this pass makes: xla-no-unroll-elementwise-loops still
# takes their kernel for an elementwise one (its loops stay rolled)
LANE_STRIDE_TAG = "xla.lane_stride"
# LLVM unrolls the lane loop of a read of up to 32 lanes (AVX2's 4 x 8), and
# that code was the faster there (c64 exp as pairs at x86-64-v3: 0.19 ms
# against 0.23 as shuffles of masked loads): only wider reads are rewritten
_MIN_LANES = 33


class StridedReadsAsShuffles(ModulePass):
    """Replace an in-bounds 1-D `vector.transfer_read` of ``W`` > 32 lanes from a
    1-D memref with a constant stride ``s`` (2 to 4: a complex tensor's real
    or imaginary part as f32 pairs, `xla-complex-as-pairs`) by a masked read
    of the ``(W - 1) * s + 1`` contiguous elements from its first element to
    its last and a `vector.shuffle` of every s-th lane: the rewrite of
    strided_minor_reads.contiguous_read, which xla-flatten-minor-transfers
    makes of n-D memrefs' strided minor reads (1-D memrefs' are this pass's:
    up to 32 lanes the lane loop measured faster).

    Why: convert-vector-to-scf lowers such a read to a loop over its lanes,
    one scalar load and one `insertelement` each, the same at AVX2's 32 lanes
    (4 x 8) and AVX-512's 64 (4 x 16); at 64 the kernels ran 2-5x slower than
    at 32 (c64 log as pairs took 2x as long at the host level as at
    x86-64-v3), presumably LLVM unrolls the 32-trip loop only and the other's
    dynamic-index inserts go through the stack. One load and a two-source
    shuffle per register instead (log.c64 at the host 0.65 -> 0.25 ms).

        %v = vector.transfer_read %m[%i], %pad {in_bounds = [true]}
            : memref<131072xf32, strided<[2], offset: 1>>, vector<64xf32>
      ->
        %base, %offset, %size, %stride = memref.extract_strided_metadata %m
        %flat = memref.reinterpret_cast %base to offset: [%offset + %i * %stride], sizes: [128], strides: [1]
        %w = vector.maskedload %flat[%c0], (lanes 0..126), %zero : vector<128xf32>
        %v = vector.shuffle %w, %w [0, 2, 4, ..., 126] {xla.lane_stride}
    """

    name = "xla-strided-reads-as-shuffles"

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "vector.transfer_read":
                stride = _lane_stride(op)
                if stride is not None:
                    with op.location:
                        contiguous_read(op, stride, {LANE_STRIDE_TAG: ir.UnitAttr.get()})


def _lane_stride(read: ir.Operation) -> int | None:
    """The constant stride s of ``read``'s 1-D memref, where the read is an
    unmasked, in-bounds, minor-identity 1-D read of more than 32 lanes from a
    static memref and 2 <= s <= 4."""
    if len(read.operands) != 3 or not isinstance(read.operands[0].type, ir.MemRefType):
        return None
    memref = ir.MemRefType(read.operands[0].type)
    vector = ir.VectorType(read.results[0].type)
    if memref.rank != 1 or vector.rank != 1 or not memref.has_static_shape or \
            vector.shape[0] < _MIN_LANES:
        return None
    if str(read.attributes["in_bounds"]) != "[true]" or \
            str(read.attributes["permutation_map"]) != "affine_map<(d0) -> (d0)>":
        return None
    strides, _ = memref.get_strides_and_offset()
    stride = strides[0]
    return stride if 2 <= stride <= MAX_STRIDE else None
