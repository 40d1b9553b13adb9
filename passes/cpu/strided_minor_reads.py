"""Reads of every s-th element along a strided minor dim as one contiguous
masked load and a shuffle (xla-flatten-minor-transfers, in the loops the
`xla_elementwise_minor_*` schedules tag).

An NCHW max-pool gradient's window positions are slices of the operand with
a stride of 2 (or 3) along its minor dim, each read as a ``W x 2`` vector
broadcast along the output's [w, 2] rows (select_and_scatter_windows.py).
convert-vector-to-scf unpacks such a read into W scalar loads; here it is
one load of the ``s * W`` elements the W span (masked past the last one
read: nothing beyond the slice's own elements is touched) and a
`vector.shuffle` that picks every s-th lane (and repeats it along the
broadcast dim):

    vector.transfer_read %m[%i, %j], %p {permutation_map = (d0, d1) -> (d1, 0)}
        : memref<16x32xf32, strided<[128, 2], offset: 1>>, vector<8x2xf32>
  ->
    %base, %offset, ... = memref.extract_strided_metadata %m
    %flat = memref.reinterpret_cast %base to offset: [%offset + %i * 128 + %j * 2], sizes: [16], strides: [1]
    %v = vector.maskedload %flat[%c0], (lanes 0..14), %zero : vector<16xf32>
    vector.shape_cast (vector.shuffle %v, %v [0, 0, 2, 2, ..., 14, 14]) : vector<8x2xf32>
"""

from __future__ import annotations

from xlac.mlir import ir

MAX_STRIDE = 4                # s elements loaded per one used: beyond this a gather's loads win
_DYNAMIC = -(1 << 63)         # ShapedType::kDynamic


def strided_read(read: ir.Operation) -> int | None:
    """The minor stride s of a read this rewrites, else None: an unmasked,
    in-bounds ``W`` or ``W x M`` read of an n-D (``W``: n >= 2) memref whose minor dim has a static
    stride 2..MAX_STRIDE, its vector's first dim along that memref dim (the
    second, if any, a broadcast)."""
    source = read.operands[0].type
    if not isinstance(source, ir.MemRefType) or len(read.operands) != 2 + ir.MemRefType(source).rank:
        return None
    memref = ir.MemRefType(source)
    layout = memref.layout
    if not isinstance(layout, ir.StridedLayoutAttr):
        return None
    strides = list(layout.strides)
    if not strides or not 2 <= strides[-1] <= MAX_STRIDE or any(s == _DYNAMIC for s in strides):
        return None
    vector = ir.VectorType(read.results[0].type)
    if vector.rank == 1 and memref.rank == 1:
        # a 1-D memref's every s-th element (a complex pair's part) is
        # xla-strided-reads-as-shuffles' to take: up to 32 lanes the lane loop
        # LLVM unrolls measured faster there (c64 exp as pairs at x86-64-v3)
        return None
    if vector.rank not in (1, 2) or vector.scalable or \
            not all(ir.BoolAttr(b).value for b in ir.ArrayAttr(read.attributes["in_bounds"])):
        return None
    results = list(ir.AffineMapAttr(read.attributes["permutation_map"]).value.results)
    minor = ir.AffineExpr.get_dim(memref.rank - 1)
    if results[0] != minor:
        return None
    if vector.rank == 2 and not (isinstance(results[1], ir.AffineConstantExpr) and results[1].value == 0):
        return None
    return strides[-1]


def contiguous_read(read: ir.Operation, stride: int, shuffle_attributes: dict | None = None) -> None:
    """Replace ``read`` (``strided_read`` gave ``stride``, or
    xla-strided-reads-as-shuffles' 1-D read) by a masked contiguous load and
    a shuffle, which gets ``shuffle_attributes`` too; the same values."""
    loc, ip = read.location, ir.InsertionPoint(read)
    memref = ir.MemRefType(read.operands[0].type)
    vector = ir.VectorType(read.results[0].type)
    element, rank = vector.element_type, memref.rank
    width = vector.shape[0]
    repeat = vector.shape[1] if vector.rank == 2 else 1
    index = ir.IndexType.get()

    def create(name, results, operands, attributes=None):
        return ir.Operation.create(name, results=results, operands=operands, attributes=attributes or {},
                                   loc=loc, ip=ip).results

    base_type = ir.MemRefType.get([], element, memory_space=memref.memory_space)
    meta = create("memref.extract_strided_metadata", [base_type, index] + [index] * (2 * rank),
                  [read.operands[0]])
    offset = meta[1]
    for d in range(rank):
        term = create("arith.muli", [index], [read.operands[1 + d], meta[2 + rank + d]])[0]
        offset = create("arith.addi", [index], [offset, term])[0]
    span = stride * width
    flat_type = ir.MemRefType.get([span], element, ir.StridedLayoutAttr.get(_DYNAMIC, [1]),
                                  memory_space=memref.memory_space)
    flat = create("memref.reinterpret_cast", [flat_type], [meta[0], offset], {
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0]),
        "static_offsets": ir.DenseI64ArrayAttr.get([_DYNAMIC]),
        "static_sizes": ir.DenseI64ArrayAttr.get([span]),
        "static_strides": ir.DenseI64ArrayAttr.get([1])})[0]
    lanes = ir.VectorType.get([span], element)
    mask = create("vector.constant_mask", [ir.VectorType.get([span], ir.IntegerType.get_signless(1))], [],
                  {"mask_dim_sizes": ir.DenseI64ArrayAttr.get([(width - 1) * stride + 1])})[0]
    zero = ir.FloatAttr.get(element, 0.0) if not isinstance(element, ir.IntegerType) \
        else ir.IntegerAttr.get(element, 0)
    pass_thru = create("arith.constant", [lanes], [], {"value": ir.DenseElementsAttr.get_splat(lanes, zero)})[0]
    c0 = create("arith.constant", [index], [], {"value": ir.IntegerAttr.get(index, 0)})[0]
    loaded = create("vector.maskedload", [lanes], [flat, c0, mask, pass_thru])[0]
    picks = [i * stride for i in range(width) for _ in range(repeat)]
    picked = create("vector.shuffle", [ir.VectorType.get([width * repeat], element)], [loaded, loaded],
                    {"mask": ir.DenseI64ArrayAttr.get(picks), **(shuffle_attributes or {})})[0]
    value = create("vector.shape_cast", [vector], [picked])[0] if vector.rank == 2 else picked
    read.results[0].replace_all_uses_with(value)
    read.erase()
