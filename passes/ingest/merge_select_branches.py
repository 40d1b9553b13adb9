"""xla-merge-select-branches: a select of two computations of the same shape
as one computation on selected operands."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops
from xlac.record import record

# Pure elementwise StableHLO ops: lane i of the result depends on lane i of
# the operands only, so selecting operands per lane selects the result.
_ELEMENTWISE = frozenset("stablehlo." + name for name in """
abs add and atan2 cbrt ceil clamp compare convert cosine count_leading_zeros
divide exponential exponential_minus_one floor imag is_finite log log_plus_one
logistic maximum minimum multiply negate not or popcnt power real reduce_precision
remainder round_nearest_afz round_nearest_even rsqrt select shift_left
shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh xor
""".split())


class MergeSelectBranches(ModulePass):
    """Rewrite `select(c, f(a1, b1), f(a2, b2))` as `f(select(c, a1, a2),
    select(c, b1, b2))`, recursively, where both sides are the same pure
    elementwise op (name, attributes, types) used by nothing else, and only
    where the whole rewrite leaves fewer ops than it found.

    Why: chlo's decompositions compute two polynomial branches and select
    one (erfc's f32 approximation: two Horner chains of 8 and 9
    coefficients on the same z, selected on |x| < 2). Merged, the chain is
    evaluated once on selected coefficients (a select of two constants is
    a blend), 7 of erfc's ~60 ops an element fewer. Lane by lane the merged
    op computes exactly what the selected side computed, on the same
    operand values: results are bitwise the same, NaN, inf and -0 included.
    Operands equal on both sides (the same SSA value) need no select; where
    the two sides stop matching (a chain one step longer), the rest is
    selected as it is: nothing is padded. An op with another user (one the
    condition is computed from, a shared subexpression) is kept and selected
    whole.

        %p = stablehlo.multiply %u, %z
        %q = stablehlo.multiply %v, %z
        %r = stablehlo.select %c, %p, %q
      ->
        %s = stablehlo.select %c, %u, %v
        %r = stablehlo.multiply %s, %z
    """

    name = "xla-merge-select-branches"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)

    acts_on = frozenset({"stablehlo.select"})

    def run(self, module: ir.Operation) -> None:
        selects = [op for op in module_ops(module) if op.name == "stablehlo.select"]
        pending = set(selects)        # the selects not yet erased (merged into another's)
        if selects:
            forget_module_ops()       # merging may erase and add ops
        for op in selects:
            if op in pending:
                _merge(op, pending)


@record(mutable=True)
class _Plan:
    """How to make one pair (a, b) of operands: ``cost`` is the ops it adds
    less the ops it frees; ``merged``: the op both sides are (None: select
    the pair, or take ``a`` where a is b)."""

    a: ir.Value
    b: ir.Value
    cost: int
    merged: ir.Operation | None = None
    children: list[_Plan] | None = None


def _merge(select: ir.Operation, pending: set[ir.Operation]) -> None:
    condition, a, b = select.operands
    if not _mergeable(a, b, select.block):
        return
    children = [_plan(x, y, select.block) for x, y in zip(a.owner.operands, b.owner.operands)]
    # one merged op for the select and the two ops it chose between
    if sum(child.cost for child in children) - 2 >= 0:
        return
    root = _Plan(a, b, 0, a.owner.operation, children)
    with ir.InsertionPoint(select), select.location:
        merged = _build(root, condition)
    select.results[0].replace_all_uses_with(merged)
    _erase([select], pending)
    _erase_merged(root, pending)


def _plan(a: ir.Value, b: ir.Value, block: ir.Block) -> _Plan:
    """The cheaper of selecting (a, b) as they are and merging their ops."""
    if a == b:
        return _Plan(a, b, 0)
    leaf = _Plan(a, b, 1)
    if not _mergeable(a, b, block):
        return leaf
    children = [_plan(x, y, block) for x, y in zip(a.owner.operands, b.owner.operands)]
    cost = 1 - 2 + sum(child.cost for child in children)
    return _Plan(a, b, cost, a.owner.operation, children) if cost < leaf.cost else leaf


def _mergeable(a: ir.Value, b: ir.Value, block: ir.Block) -> bool:
    """Both values are the one result of the same elementwise op, in
    ``block``, on operands of the result's shape, each used once."""
    if isinstance(a.owner, ir.Block) or isinstance(b.owner, ir.Block):
        return False
    x, y = a.owner.operation, b.owner.operation
    if x == y or x.name != y.name or x.name not in _ELEMENTWISE:
        return False
    if x.block != block or y.block != block or len(x.results) != 1 or len(y.results) != 1:
        return False
    if _use_count(a) != 1 or _use_count(b) != 1 or a.type != b.type:
        return False
    if len(x.operands) != len(y.operands) or _attributes(x) != _attributes(y):
        return False
    shape = _shape(a.type)
    return all(u.type == v.type and _shape(u.type) == shape
               for u, v in zip(x.operands, y.operands))


def _use_count(value: ir.Value) -> int:
    return sum(1 for _ in value.uses)


def _attributes(op: ir.Operation) -> dict[str, ir.Attribute]:
    attributes = op.attributes
    return {attributes[i].name: attributes[i].attr for i in range(len(attributes))}


def _shape(type_: ir.Type) -> tuple[int, ...] | None:
    return tuple(type_.shape) if isinstance(type_, ir.ShapedType) else None


def _build(plan: _Plan, condition: ir.Value) -> ir.Value:
    """The value of ``plan`` made at the insertion point."""
    if plan.a == plan.b:
        return plan.a
    if plan.merged is None:
        return _select(condition, plan.a, plan.b)
    operands = [_build(child, condition) for child in plan.children]
    op = ir.Operation.create(plan.merged.name, results=[plan.a.type], operands=operands,
                             attributes=_attributes(plan.merged))
    return op.results[0]


def _select(condition: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    """(a, b) have the outer select's shape (``_mergeable``): its condition fits."""
    return ir.Operation.create("stablehlo.select", results=[a.type],
                               operands=[condition, a, b]).results[0]


def _erase_merged(plan: _Plan, pending: set[ir.Operation]) -> None:
    """Erase both sides' ops of every merged pair, users before operands."""
    if plan.merged is None:
        return
    _erase([plan.a.owner.operation, plan.b.owner.operation], pending)
    for child in plan.children:
        _erase_merged(child, pending)


def _erase(ops: list[ir.Operation], pending: set[ir.Operation]) -> None:
    for op in ops:
        pending.discard(op)
        op.erase()
