"""xla-hoist-loop-invariants: a vectorized loop's invariant reads of tensors
and arithmetic on them computed once before the loop."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

# Ops without memory effects on tensors and vectors (a tensor read is a value).
_PURE_DIALECTS = ("arith.", "math.", "index.")
_PURE = frozenset(("vector.broadcast", "vector.step", "vector.splat", "vector.shape_cast",
                   "vector.extract", "vector.insert", "vector.bitcast", "vector.fma",
                   "vector.create_mask", "vector.constant_mask", "vector.transfer_read",
                   "affine.apply", "affine.min", "affine.max", "tensor.extract", "tensor.dim"))


class HoistLoopInvariants(ModulePass):
    """Move the ops at the top of an `scf.for`'s body whose operands are all
    defined outside the loop before it: reads of tensors (`vector.transfer_read`,
    `tensor.extract`) and `arith`, `math`, `index` and vector value ops.

    Why: a vectorized kernel's row-invariant values stay in its inner loop
    (the schedules vectorize the whole body), and after bufferization LLVM
    cannot hoist a read past the loop's stores to another buffer (nothing says
    they do not alias), nor then what is computed from it. `jax.jacfwd(jnp.sin)`
    read `x[i]` and called `cosf` on it once per 64 outputs of row `i`, every
    vector register spilled around each call: 1.6 ms for a 2048 x 2048
    Jacobian where XLA takes 0.8. On tensors a read is a value, so the read
    and what is computed from it move out as upstream LICM would move them.

    Only loops with constant bounds that run at least once: the body's ops run
    in the first trip anyway, so none is executed where it was not (a read out
    of bounds, a division by zero). Inner loops are done first, so a value
    invariant in the whole nest reaches the outermost loop it does not depend on.

        scf.for %j = %c0 to %c2048 step %c64 ... {
          %x = vector.transfer_read %t[%i], %pad {permutation_map = (d0) -> (0)}
          %c = math.cos %x : vector<64xf32>
          ... %c ...
        }
      ->
        %x = vector.transfer_read %t[%i], %pad {permutation_map = (d0) -> (0)}
        %c = math.cos %x : vector<64xf32>
        scf.for %j = %c0 to %c2048 step %c64 ... { ... %c ... }
    """

    name = "xla-hoist-loop-invariants"

    acts_on = frozenset(("scf.for",))

    def run(self, module: ir.Operation) -> None:
        loops = [op for op in module_ops(module) if op.name == "scf.for"]
        for loop in reversed(loops):                      # inner loops first
            if _runs(loop) and _calls_libm(loop):
                _hoist(loop)


# math ops that stay instructions or become inline polynomials
# (xla-approximate-math); the others are a libm call per lane
_INLINE_MATH = frozenset(("math.absf", "math.cbrt", "math.copysign", "math.exp", "math.expm1", "math.fma",
                          "math.log", "math.log1p", "math.roundeven", "math.tanh", "math.sqrt", "math.rsqrt",
                          "math.floor", "math.ceil", "math.round", "math.trunc", "math.absi", "math.ctlz",
                          "math.cttz", "math.ctpop"))


def _calls_libm(loop: ir.Operation) -> bool:
    """Whether ``loop``'s body calls libm (a math op no instruction or inline
    polynomial computes). Only there does hoisting pay: every vector spilled
    around each call. Elsewhere LLVM's own LICM does what it can, and hoisting
    everything (BERT's index vectors and reads) made its compile 3.5x slower
    (0.75 -> 2.6 s) for no run time."""
    return any(_is_libm(op) for op in loop.regions[0].blocks[0].operations)


# no vector instruction divides integers: LLVM scalarizes each lane's division
_INTEGER_DIVISIONS = frozenset(("arith.divsi", "arith.divui", "arith.remsi", "arith.remui",
                                "arith.floordivsi", "arith.ceildivsi", "arith.ceildivui"))


def _is_libm(op) -> bool:
    """A libm call per lane, or a vector integer division (betainc's trip
    counter, `n % 2` and `(n - 1) // 2` per element: a scalar idiv a lane)."""
    if op.name in _INTEGER_DIVISIONS:
        return isinstance(op.results[0].type, ir.VectorType)
    return op.name.startswith("math.") and op.name not in _INLINE_MATH


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    op = owner.operation if isinstance(owner, ir.OpView) else owner
    if not isinstance(op, ir.Operation) or op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _runs(loop: ir.Operation) -> bool:
    """Whether ``loop``'s bounds are constants and it runs at least once."""
    lower, upper, step = (_constant(v) for v in loop.operands[:3])
    return None not in (lower, upper, step) and lower < upper and step > 0


def _hoistable(op: ir.Operation) -> bool:
    """Whether ``op`` has no effect but its results (a read only of a tensor)."""
    if len(op.regions) or not (op.name.startswith(_PURE_DIALECTS) or op.name in _PURE):
        return False
    return op.name not in ("vector.transfer_read", "tensor.extract", "tensor.dim") \
        or isinstance(op.operands[0].type, ir.RankedTensorType)


def _hoist(loop: ir.Operation) -> None:
    """Move the libm calls on invariant values, and the invariant ops they
    read, before ``loop`` (in their order)."""
    body = loop.regions[0].blocks[0]
    inside = set(body.arguments)                         # values defined in the loop
    invariant = []
    for op in list(body.operations):
        op = op.operation
        if _hoistable(op) and inside.isdisjoint(op.operands):
            invariant.append(op)
        else:
            inside.update(op.results)
    wanted = set()
    for op in reversed(invariant):                       # readers before what they read
        if _is_libm(op) or any(r in wanted for r in op.results):
            wanted.update(op.operands)
            wanted.update(op.results)
    for op in invariant:
        if any(r in wanted for r in op.results):
            op.move_before(loop)
