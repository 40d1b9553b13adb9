"""What xla-fuse knows about each StableHLO op: its fusion class and its cost.

The classes follow XLA's instruction fusion: elementwise ops and cheap data
movement fuse into loops; reductions are the roots of input fusions; dots
and convolutions are the roots of output fusions; everything else (control
flow, custom calls, sort, scatter, ...) stays a kernel of its own.
"""

from __future__ import annotations

import math

from xlac.dialects.xla import reads_from_above
from xlac.dtypes import element_bytes
from xlac.mlir import ir

ELEMENTWISE = "elementwise"
MOVEMENT = "movement"        # broadcasts, reshapes, transposes, slices: no arithmetic
CONSTANT = "constant"
REDUCE = "reduce"
DOT = "dot"                  # dot_general, dot, convolution
OTHER = "other"

_ELEMENTWISE = frozenset(f"stablehlo.{name}" for name in ["abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "complex", "convert", "cosine", "count_leading_zeros", "divide", "exponential", "exponential_minus_one", "floor", "imag", "is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real", "reduce_precision", "remainder", "round_nearest_afz", "round_nearest_even", "rsqrt", "select", "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan", "tanh", "xor"])

_MOVEMENT = frozenset(f"stablehlo.{name}" for name in ["broadcast", "broadcast_in_dim", "reshape", "transpose", "slice", "concatenate", "pad", "reverse", "iota", "dynamic_slice"])

# XLA's "expensive" ops: transcendental math. Recomputing them (duplicating
# them into several kernels, or once per broadcast element) costs more than
# the memory traffic fusion saves.
_TRANSCENDENTAL = frozenset(f"stablehlo.{name}" for name in ["atan2", "cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "power", "rsqrt", "sine", "sqrt", "tan", "tanh"])
_INTEGER_DIVISION = frozenset({"stablehlo.divide", "stablehlo.remainder"})

_DOTS = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})

# A constant this small (or a splat) is copied into every kernel that reads it.
SMALL_CONSTANT = 16


def op_class(op: ir.Operation) -> str:
    """ELEMENTWISE, MOVEMENT, CONSTANT, REDUCE, DOT or OTHER."""
    name = op.name
    if name in _ELEMENTWISE:
        return ELEMENTWISE
    if name in _MOVEMENT:
        return MOVEMENT
    if name == "stablehlo.constant":
        return CONSTANT
    if name in _DOTS:
        return DOT
    if name == "stablehlo.reduce" and not reads_from_above(op):     # such a body cannot move
        return REDUCE
    return OTHER


def is_expensive(op: ir.Operation) -> bool:
    """True for transcendental math and integer division (XLA's IsExpensive)."""
    if op.name in _TRANSCENDENTAL:
        return True
    return op.name in _INTEGER_DIVISION and _is_integer(op.results[0].type)


def is_duplicable(op: ir.Operation) -> bool:
    """Cheap enough to copy into each consumer's kernel."""
    kind = op_class(op)
    if kind == CONSTANT:
        return numel(op.results[0].type) <= SMALL_CONSTANT or is_splat_constant(op)
    return kind in (ELEMENTWISE, MOVEMENT) and not is_expensive(op)


def is_one_value(op: ir.Operation) -> bool:
    """A splat constant, or a broadcast of one element: in a kernel's loop, one
    value held in a register, no load or instruction per element."""
    if op_class(op) == CONSTANT:
        return is_splat_constant(op)
    return op.name == "stablehlo.broadcast_in_dim" and numel(op.operands[0].type) == 1


def effectively_at_most_unary(op: ir.Operation) -> bool:
    """At most one operand as big as the result, broadcasts, iotas and small
    constants not counted (XLA's EffectivelyAtMostUnary).

    Why: a copy of such an op reads nothing more than its consumer would. A
    binary op copied into each reader makes each also read both its inputs,
    and a chain of them (a transformer's residual stream, x = x + f(x)) is
    recomputed whole by every later kernel: work and kernel inputs grow with
    the square of the depth.
    """
    if _slices_of_one_value(op):
        return True
    rank = max((len(r.type.shape) for r in op.results
                if isinstance(r.type, ir.RankedTensorType)), default=0)
    big = 0
    for value in op.operands:
        owner = value.owner
        source = None if isinstance(owner, ir.Block) else owner.operation
        if source is not None and (source.name in ("stablehlo.broadcast_in_dim",
                                                   "stablehlo.broadcast", "stablehlo.iota")
                                   or (op_class(source) == CONSTANT and is_duplicable(source))):
            continue
        if isinstance(value.type, ir.RankedTensorType) and len(value.type.shape) >= rank:
            big += 1
    return big <= 1


def _slices_of_one_value(op: ir.Operation) -> bool:
    """A concatenate of slices of one tensor (``jnp.roll``: its two halves side by
    side). A copy in each reader reads that tensor once, as the reader of a
    slice does: written out instead, a stencil's rolls were each a pass over
    memory and a buffer its kernels read again."""
    if op.name != "stablehlo.concatenate" or len(op.operands) < 2:
        return False
    sources = set()
    for value in op.operands:
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.operation.name != "stablehlo.slice":
            return False
        sources.add(owner.operation.operands[0])
    return len(sources) == 1


def numel(type_: ir.Type) -> int:
    """Elements in a ranked tensor type (1 for anything else)."""
    if not isinstance(type_, ir.RankedTensorType) or not type_.has_static_shape:
        return 1
    return math.prod(type_.shape)


def bytes_of(type_: ir.Type) -> int:
    if not isinstance(type_, ir.RankedTensorType):
        return 0
    return numel(type_) * (element_bytes(type_.element_type) or 1)   # no width: a byte


def type_text(type_: ir.Type) -> str:
    """``4x256xf32`` for ``tensor<4x256xf32>``."""
    text = str(type_)
    return text[len("tensor<"):-1] if text.startswith("tensor<") else text


def iteration_size(op: ir.Operation) -> int:
    """How many points the op's loop nest visits (its inputs' size for a reduce)."""
    if op_class(op) == REDUCE:
        return max(numel(value.type) for value in op.operands)
    return max((numel(value.type) for value in op.results), default=1)


def flops(op: ir.Operation) -> int:
    """Estimated floating-point (or integer) operations of one op."""
    kind = op_class(op)
    if kind == ELEMENTWISE:
        return numel(op.results[0].type)
    if kind == REDUCE:
        inputs = list(op.operands)[:len(op.operands) // 2]      # the rest are init values
        return sum(numel(value.type) for value in inputs)
    if kind == DOT:
        return 2 * numel(op.results[0].type) * contracted_size(op)
    return 0


def contracted_size(op: ir.Operation) -> int:
    """Products summed per result element of a dot or convolution."""
    lhs, rhs = op.operands[0].type.shape, op.operands[1].type.shape
    if op.name == "stablehlo.dot":
        return lhs[-1]
    if op.name == "stablehlo.convolution":
        # each output element sums over the kernel but its output-feature dimension
        return math.prod(rhs) // max(1, rhs[_kernel_output_feature_dim(op)])
    dims = _attr_text(op, "dot_dimension_numbers")
    start = dims.find("lhs_contracting_dimensions = [")
    if start < 0:
        return 1
    inner = dims[start + len("lhs_contracting_dimensions = ["):].split("]")[0]
    return math.prod(lhs[int(d)] for d in inner.split(",") if d.strip())


def _kernel_output_feature_dim(op: ir.Operation) -> int:
    """Where 'o' is in ``#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>``."""
    text = _attr_text(op, "dimension_numbers")
    try:
        kernel = text.split("x[", 1)[1].split("]", 1)[0]
        return [d.strip() for d in kernel.split(",")].index("o")
    except (IndexError, ValueError):
        return -1


def _attr_text(op: ir.Operation, name: str) -> str:
    return str(op.attributes[name]) if name in op.attributes else ""


def is_splat_constant(op: ir.Operation) -> bool:
    try:
        value = op.attributes["value"]
    except TypeError:       # complex elements cannot be read from Python: look at the text
        text = op.get_asm(large_elements_limit=SMALL_CONSTANT)
        return not any(mark in text for mark in ("dense<[", 'dense<"', "__elided__"))
    return isinstance(value, ir.DenseElementsAttr) and value.is_splat


def _is_integer(type_: ir.Type) -> bool:
    element = type_.element_type if isinstance(type_, ir.ShapedType) else type_
    return isinstance(element, ir.IntegerType)
