"""xla-horner-fma: f32 polynomials evaluated by Horner's rule as fused multiply-adds."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

# Three steps or more, on constant coefficients: the polynomials of chlo's
# decompositions (erfc's chains of 7 and 8 steps, erf's, erf_inv's ...), or on
# coefficients broadcast from one scalar each (jnp.polyval's Horner loop: XLA
# fuses it too, bit for bit); not a program's own `a * b + c` nor an
# elementwise recurrence `h * a + x`, which keep their two roundings.
MIN_STEPS = 3


class HornerFma(ModulePass):
    """Rewrite each step `acc * w + c` of an f32 Horner chain (scalar or
    vector) of MIN_STEPS steps or more, where `acc` is the previous step's
    sum and `c` a constant coefficient, as `math.fma acc, w, c`.

    Why: chlo decomposes erfc, erf, erf_inv ... into polynomials, each step a
    multiply and an add rounded apart; fused, a step is one instruction,
    exact before its one rounding. erfc's f32 chains (the erf-GELU of BERT
    and ViT) are 26 of its ~75 ops an element: 13 FMAs instead (the GELU
    alone 0.84x the time at x86-64-v3, 0.95x with AVX-512; its f32 error
    against float64 no larger in any range, test_horner_fma.py). Numerics:
    results move by up to 4 ulp (erfc), not bitwise the same. Only where the
    CPU has FMA (x86-64-v3 and up): elsewhere `math.fma` is a libm call per
    lane. A step whose product has another user stays as it is.

        %p = arith.mulf %acc, %w : vector<16xf32>
        %s = arith.addf %p, %c : vector<16xf32>
      ->
        %s = math.fma %acc, %w, %c : vector<16xf32>
    """

    name = "xla-horner-fma"

    acts_on = frozenset({"arith.addf"})

    def run(self, module: ir.Operation) -> None:
        steps = {op: product for op in module_ops(module) if (product := _step_product(op)) is not None}
        for add in _in_long_chains(steps):
            _fuse(add, steps[add])


def _step_product(op: ir.Operation) -> ir.Operation | None:
    """The `arith.mulf` whose product ``op`` (an f32 `arith.addf`) adds to a
    coefficient, where that product has no other user."""
    if op.name != "arith.addf" or not _is_f32(op.results[0].type):
        return None
    first, second = op.operands
    for value, other in ((first, second), (second, first)):
        owner = _owner(value)
        if owner is not None and owner.name == "arith.mulf" and _single_use(value) \
                and _is_coefficient(other):
            return owner
    return None


def _is_coefficient(value: ir.Value) -> bool:
    """A constant, a select of two (xla-merge-select-branches' merged
    coefficients), or a vector broadcast from one scalar (a coefficient read
    from memory, as jnp.polyval's): a program's own recurrence `h * a + x`,
    whose `x` differs lane by lane, is left as it is."""
    owner = _owner(value)
    if owner is None:
        return False
    if owner.name == "arith.select":
        return all(_owner(v) is not None and _owner(v).name == "arith.constant"
                   for v in list(owner.operands)[1:])
    return owner.name == "arith.constant" or _is_scalar_broadcast(owner)


def _is_scalar_broadcast(op: ir.Operation) -> bool:
    """`vector.broadcast` of a scalar, or a `vector.transfer_read` whose map
    reads one element into every lane (`affine_map<(...) -> (0)>`)."""
    if op.name == "vector.broadcast":
        return not str(op.operands[0].type).startswith("vector<")
    if op.name != "vector.transfer_read":
        return False
    permutation = ir.AffineMapAttr(op.attributes["permutation_map"]).value
    return all(str(result) == "0" for result in permutation.results)


def _in_long_chains(steps: dict[ir.Operation, ir.Operation]) -> list[ir.Operation]:
    """The steps of chains of MIN_STEPS or more: a step continues the chain
    of a step whose sum its product multiplies. Depths in program order (a
    predecessor comes first), then backwards: a long chain's steps before
    its MIN_STEPS-th are taken too."""
    previous = {add: next((p for v in product.operands if (p := _owner(v)) in steps), None)
                for add, product in steps.items()}
    depth: dict[ir.Operation, int] = {}
    for add in steps:
        before = previous[add]
        depth[add] = depth.get(before, 0) + 1 if before is not None else 1
    chosen: set[ir.Operation] = set()
    for add in reversed(list(steps)):
        if depth[add] >= MIN_STEPS or add in chosen:
            chosen.add(add)
            if previous[add] is not None:
                chosen.add(previous[add])
    return [add for add in steps if add in chosen]


def _fuse(add: ir.Operation, product: ir.Operation) -> None:
    first, second = add.operands
    addend = second if _owner(first) == product else first
    with ir.InsertionPoint(add), add.location:
        fma = ir.Operation.create("math.fma", results=[add.results[0].type],
                                  operands=[product.operands[0], product.operands[1], addend])
    add.results[0].replace_all_uses_with(fma.results[0])
    add.erase()
    product.erase()


def _owner(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return owner.operation if isinstance(owner, ir.OpView) else None


def _single_use(value: ir.Value) -> bool:
    uses = iter(value.uses)
    return next(uses, None) is not None and next(uses, None) is None


def _is_f32(type_: ir.Type) -> bool:
    text = str(type_)
    return text == "f32" or (text.startswith("vector<") and text.endswith("xf32>"))
