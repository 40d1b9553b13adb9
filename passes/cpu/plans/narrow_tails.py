"""The plans' answers to AVX2: a math-heavy kernel's lanes counted in f32
(its math runs in f32), and the peeled schedules (xla_elementwise_peeled_*,
xla_reduce_rows_peeled_*) where elements would be moved under a mask in
every step of a loop. ``nest``
and ``machine`` are schedule_plan's LoopNest and Machine."""

from __future__ import annotations

from xlac import record
from xlac.mlir import ir
from xlac.passes.base import is_zero, text_of

ROW_STEP = 16                # xla_reduce_rows_*'s partial step (schedule_plan.REDUCTION_LANES)
SPLIT_ROWS = 32              # xla_reduce_1d's rows (its split_factor)


def lanes(nest, machine) -> int:
    """The lanes of one register of ``nest``'s widest element in memory."""
    return machine.vector_bytes // nest.element_bytes


def vector_lanes(nest, machine, math_heavy: bool) -> int:
    """The lanes of one register for an elementwise kernel: of its widest
    element in memory, and for a math-heavy one of f32: its math runs in f32 (bf16, f16 and
    f8 math through the f32 polynomials), so four registers of f32, not of
    the narrow type in memory: 64 bf16 lanes at AVX2 were 8 ymm per value
    of a tanh polynomial, which spilled half its 16 registers each step.
    AVX-512's 32 registers keep the narrow type's count (8 zmm a value: as
    fast as 4 on Zen 4, bf16 tanh 0.27-0.30 ms either way)."""
    compute = 4 if math_heavy and machine.registers < 32 else 1
    return machine.vector_bytes // max(nest.element_bytes, compute)


def peel_tail(plan, op: ir.Operation, nest, machine):
    """``plan`` (None: None), or its peeled twin (xla_elementwise_peeled_<rank>d,
    xla_reduce_rows_peeled_<rank>d: whole vectors unmasked, only the
    innermost loop's last, partial one masked) where the vector does not
    divide that loop, below AVX-512 (x86-64-v4 has masked moves of every
    width, as cheap as plain ones on Zen 4). Without it every step of the
    loop was masked: 8- and 16-bit elements, which AVX2 has no masked moves
    of, became a branch and a scalar move per lane; 32- and 64-bit ones
    vmaskmovps/pd, whose stores are microcoded on AMD's cores: rows of
    1485 f32 (jnp.round, 1 MB) 0.160 ms against 0.061 peeled at x86-64-v3,
    jnp.exp 0.59 against 0.14, a softmax over rows of 3075 0.91 against
    0.30, a row variance's sums 0.48 against 0.13. A whole 1-D sum
    (xla_reduce_1d: 32 rows) peels its rows' tails the same way
    (xla_reduce_1d_peeled)."""
    if plan is None:
        return None
    if plan.sequence == "xla_reduce_1d":       # 32 rows of n / 32 (i16 sum of 524000: rows of 16375)
        if machine.vector_bytes >= 64 or (nest.extents[-1] // SPLIT_ROWS) % ROW_STEP == 0:
            return plan
        return record.replace(plan, sequence="xla_reduce_1d_peeled")
    rows = plan.sequence.startswith("xla_reduce_rows_")
    if not rows and not plan.sequence.startswith("xla_elementwise_"):
        return plan
    vector = ROW_STEP if rows else plan.params[-1]
    if machine.vector_bytes >= 64 or nest.extents[-1] % vector == 0:
        return plan
    kind = "xla_reduce_rows_" if rows else "xla_elementwise_"
    return record.replace(plan, sequence=plan.sequence.replace(kind, f"{kind}peeled_"))


def narrowest_bytes(op: ir.Operation) -> int:
    """The bytes of the narrowest element among ``op``'s operands (an i1 or
    an f8 counts 1; 8 where none is a float or an integer)."""
    widths = [_bits(v.type.element_type) for v in op.operands if isinstance(v.type, ir.ShapedType)]
    return max(1, min(widths, default=64) // 8)


def _bits(element: ir.Type) -> int:
    for kind in (ir.FloatType, ir.IntegerType):
        if isinstance(element, kind):
            return kind(element).width
    return 64                                  # complex, index


def has_narrow_float(op: ir.Operation) -> bool:
    """Whether an operand of ``op`` holds floats narrower than f32 (bf16, f16, f8)."""
    elements = [v.type.element_type for v in op.operands if isinstance(v.type, ir.ShapedType)]
    return any(isinstance(e, ir.FloatType) and ir.FloatType(e).width < 32 for e in elements)


def streamed_bytes(op: ir.Operation, maps, types, sizes: dict, widest: int) -> int:
    """The widest element of an all-parallel op that a lane holds: an input
    whose map reads one element for every iteration (a rank-0 tensor, ``()``
    or only zeros) is uniform, computed on once (xla-hoist-loop-invariants
    moves its reads and arithmetic out of the vector loop), so its type sets
    no lane count. betainc's body kernel read jax's i64 trip counter as a
    tensor<i64> beside 13 f32 arrays: 4 f32 lanes (one i64 ymm) at AVX2, half
    a register per f32 value. ``sizes``: element type text -> bytes."""
    kept = [t for amap, t in zip(maps, types[:len(types) - len(op.results)])
            if not (isinstance(t, ir.RankedTensorType) and all(is_zero(e) for e in amap.results))]
    kept += list(types[len(types) - len(op.results):])
    streamed = [sizes.get(text_of(t.element_type), widest) for t in kept if isinstance(t, ir.RankedTensorType)]
    return max(streamed, default=widest)

