"""Integer dots summed exactly in f32 in chunks of k (xla-widen-contractions).

An i8 x i8 dot's products and partial sums are integers an f32 holds exactly
up to k = 1024 (ui8 x i8: 512, ui8 x ui8: 258): each chunk of k that long is an
f32 dot (the f32 matmul schedules: 16 f32 FMAs an AVX-512 instruction, 8 at
AVX2, on every x86 level) whose exact sums are converted to i32 and added in
i32. Adding in i32 wraps as one i32 sum does (truncation mod 2^32 is a ring
homomorphism), so the result is XLA's bit for bit for every k. Before, a dot
past the f32 bound was widened to i32 and multiplied with AVX2/AVX-512 i32
multiplies (`vpmulld`: 2-3x slower than the FMAs, docs/PERFORMANCE.md).
Where the CPU has an integer micro-kernel (xlac.targets.cpu.imad_kernels) the
dots it takes need no chunks at all (``kernel_takes_whole_k``).
"""

from __future__ import annotations

from xlac.mlir import ir, stablehlo

# the shortest chunk worth its own dot (a shorter bound, i16 operands: widen to i32)
MIN_CHUNK = 128


def _tensor(value: ir.Value) -> ir.RankedTensorType:
    return ir.RankedTensorType(value.type)


def retyped(value_type: ir.Type, element: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(ir.RankedTensorType(value_type).shape, element)


def convert(value: ir.Value, to: ir.Type) -> ir.Value:
    if value.type == to:
        return value
    return ir.Operation.create("stablehlo.convert", results=[to], operands=[value]).result


def _owner(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def narrow_integer_source(value: ir.Value) -> ir.Value:
    """The narrower integer ``value`` is a `stablehlo.convert` of (an
    extension: i8 or ui8 to i32), else ``value``: jnp's
    ``a.astype(jnp.int32) @ b.astype(jnp.int32)`` is an i8 dot."""
    owner = _owner(value)
    if owner is None or owner.name != "stablehlo.convert":
        return value
    source = owner.operands[0]
    wide, narrow = _tensor(value).element_type, _tensor(source).element_type
    if isinstance(wide, ir.IntegerType) and isinstance(narrow, ir.IntegerType) \
            and ir.IntegerType(narrow).width < ir.IntegerType(wide).width:
        return source
    return value


def _contracting(op: ir.Operation) -> tuple[list[int], list[int]]:
    numbers = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    return list(numbers.lhs_contracting_dimensions), list(numbers.rhs_contracting_dimensions)


def chunk_plan(op: ir.Operation, largest_product: int, bound: int) -> tuple[int, int, list[int]] | None:
    """(lhs dim, rhs dim, chunk lengths) that split ``op``'s longest contracting
    dimension so that each chunk's sums stay within ``bound`` (at most
    ``bound // largest_product`` products a sum), the chunks as even as can be;
    None where a chunk would be shorter than MIN_CHUNK or ``op`` is no dot_general."""
    if op.name != "stablehlo.dot_general":
        return None
    lhs_dims, rhs_dims = _contracting(op)
    if not lhs_dims:
        return None
    lhs_shape = list(_tensor(op.operands[0]).shape)
    sizes = [lhs_shape[d] for d in lhs_dims]
    longest = max(range(len(sizes)), key=lambda i: sizes[i])
    others = 1
    for i, size in enumerate(sizes):
        others *= size if i != longest else 1
    most = bound // (largest_product * others)
    if most < MIN_CHUNK:
        return None
    length = sizes[longest]
    count = -(-length // most)
    lengths = [length // count + (1 if i < length % count else 0) for i in range(count)]
    return lhs_dims[longest], rhs_dims[longest], lengths


def _slice(value: ir.Value, dim: int, start: int, length: int) -> ir.Value:
    shape = list(_tensor(value).shape)
    starts, limits = [0] * len(shape), list(shape)
    starts[dim], limits[dim] = start, start + length
    shape[dim] = length
    result = ir.RankedTensorType.get(shape, _tensor(value).element_type)
    return ir.Operation.create("stablehlo.slice", results=[result], operands=[value], attributes={
        "start_indices": ir.DenseI64ArrayAttr.get(starts),
        "limit_indices": ir.DenseI64ArrayAttr.get(limits),
        "strides": ir.DenseI64ArrayAttr.get([1] * len(shape))}).result


def chunked_f32_dot(op: ir.Operation, plan: tuple[int, int, list[int]], dot_like, total: ir.Type) -> ir.Value:
    """``op``'s operands cut into ``plan``'s chunks of k, each chunk an f32 dot
    (built by ``dot_like(operands, result type)``) converted to ``total``'s
    integer type and added there; built at the insertion point."""
    lhs_dim, rhs_dim, lengths = plan
    f32 = ir.F32Type.get()
    result = op.result.type
    total_type = retyped(result, total)
    sum_ = None
    start = 0
    for length in lengths:
        lhs = _slice(op.operands[0], lhs_dim, start, length) if len(lengths) > 1 else op.operands[0]
        rhs = _slice(op.operands[1], rhs_dim, start, length) if len(lengths) > 1 else op.operands[1]
        start += length
        operands = [convert(v, retyped(v.type, f32)) for v in (lhs, rhs)]
        part = convert(dot_like(operands, retyped(result, f32)), total_type)
        sum_ = part if sum_ is None else ir.Operation.create(
            "stablehlo.add", results=[total_type], operands=[sum_, part]).result
    return sum_


# xla-amx-contractions' min-work: m x n x k from which a matmul takes a micro-kernel
KERNEL_MIN_WORK = 1 << 20
I32_SUMS = (1 << 31) - 1     # the largest sum an i32 holds without wrapping


def _plain_matmul_shapes(op: ir.Operation) -> tuple[int, int, int] | None:
    """(m, k, n) of a dot_general that lowers to a `linalg.matmul` or
    `linalg.batch_matmul` reading A[.., m, k] and B[.., k, n] as they lie
    (at most one batch dim, leading on both), else None."""
    numbers = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs, rhs = list(_tensor(op.operands[0]).shape), list(_tensor(op.operands[1]).shape)
    batch = len(numbers.lhs_batching_dimensions)
    if batch > 1 or len(lhs) != batch + 2 or len(rhs) != batch + 2 \
            or list(numbers.lhs_batching_dimensions) != list(range(batch)) \
            or list(numbers.rhs_batching_dimensions) != list(range(batch)) \
            or list(numbers.lhs_contracting_dimensions) != [batch + 1] \
            or list(numbers.rhs_contracting_dimensions) != [batch]:
        return None
    return lhs[-2], lhs[-1], rhs[-1]


def kernel_takes_whole_k(op: ir.Operation, largest_product: int, result_width: int) -> bool:
    """Whether 8-bit integer dot ``op`` is one an integer micro-kernel takes
    over its whole k as an i16 x i16 -> i32 matmul (xla-amx-contractions
    integers=i16): a plain matmul (batched or not) of at least KERNEL_MIN_WORK
    with 16 rows and columns, whose i32 sums are the result's: a result of
    32 bits or fewer (i32 wraps as the result does: truncation mod 2^32 is a
    ring homomorphism), or any sum of k products within an i32. Each product
    pair fits an i32 in the kernel (``vpmaddwd`` never saturates on 8-bit
    values widened to i16), so there is no other bound on k."""
    if op.name != "stablehlo.dot_general":
        return False
    shapes = _plain_matmul_shapes(op)
    if shapes is None:
        return False
    m, k, n = shapes
    if m < 16 or n < 16 or m * k * n < KERNEL_MIN_WORK:
        return False
    return result_width <= 32 or k * largest_product <= I32_SUMS
