"""xla-strided-reads-as-shuffles: a 1-D vector read of every s-th element, one load and a shuffle."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

# set on the shuffles this pass makes: xla-no-unroll-elementwise-loops still
# takes their kernel for an elementwise one (its loops stay rolled)
LANE_STRIDE_TAG = "xla.lane_stride"
_MAX_STRIDE = 4
# LLVM unrolls the lane loop of a read of up to 32 lanes (AVX2's 4 x 8), and
# that code was the faster there (c64 exp as pairs at x86-64-v3: 0.19 ms
# against 0.23 as shuffles of masked loads): only wider reads are rewritten
_MIN_LANES = 33


class StridedReadsAsShuffles(ModulePass):
    """Replace an in-bounds 1-D `vector.transfer_read` of ``W`` > 32 lanes from a
    1-D memref with a constant stride ``s`` (2 to 4: a complex tensor's real
    or imaginary part as f32 pairs, `xla-complex-as-pairs`) by a read of
    ``s*W`` contiguous elements from the same first element (masked past the
    memref's last element) and a `vector.shuffle` of every s-th lane.

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
        %flat = memref.reinterpret_cast %base to offset: [%offset], sizes: [262143], strides: [1]
        %w = vector.transfer_read %flat[%i * 2], %pad : memref<262143xf32, ...>, vector<128xf32>
        %v = vector.shuffle %w, %w [0, 2, 4, ..., 126]
    """

    name = "xla-strided-reads-as-shuffles"

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "vector.transfer_read":
                stride = _lane_stride(op)
                if stride is not None:
                    with ir.Location.unknown(module.context):
                        _rewrite(op, stride)


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
    return stride if 2 <= stride <= _MAX_STRIDE else None


def _rewrite(read: ir.Operation, stride: int) -> None:
    source, index, padding = read.operands
    memref = ir.MemRefType(source.type)
    lanes = ir.VectorType(read.results[0].type).shape[0]
    element = memref.element_type
    point = ir.InsertionPoint(read)
    index_type = ir.IndexType.get()

    def create(name, operands, results, attributes=None):
        return ir.Operation.create(name, results=results, operands=operands,
                                   attributes=attributes or {}, ip=point)

    metadata = create("memref.extract_strided_metadata", [source],
                      [ir.MemRefType.get([], element), index_type, index_type, index_type])
    span = stride * (memref.shape[0] - 1) + 1          # first to last element of the memref
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    flat_type = ir.MemRefType.get([span], element, ir.StridedLayoutAttr.get(dynamic, [1]))
    flat = create("memref.reinterpret_cast", [metadata.results[0], metadata.results[1]], [flat_type], {
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0]),
        "static_offsets": ir.DenseI64ArrayAttr.get([dynamic]),
        "static_sizes": ir.DenseI64ArrayAttr.get([span]),
        "static_strides": ir.DenseI64ArrayAttr.get([1])}).results[0]
    step = create("arith.constant", [], [index_type],
                  {"value": ir.IntegerAttr.get(index_type, stride)}).results[0]
    start = create("arith.muli", [index, step], [index_type]).results[0]
    wide_type = ir.VectorType.get([stride * lanes], element)
    wide = create("vector.transfer_read", [flat, start, padding], [wide_type], {
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1, 0]),
        "permutation_map": ir.AffineMapAttr.get(ir.AffineMap.get_identity(1)),
        "in_bounds": ir.ArrayAttr.get([ir.BoolAttr.get(False)])}).results[0]
    shuffled = create("vector.shuffle", [wide, wide], [read.results[0].type], {
        "mask": ir.DenseI64ArrayAttr.get([stride * i for i in range(lanes)]),
        LANE_STRIDE_TAG: ir.UnitAttr.get()}).results[0]
    read.results[0].replace_all_uses_with(shuffled)
    read.erase()
