"""Complex functions on the parts' pairs for xla-complex-as-pairs.

A complex `exponential` (`sqrt`, `log`, `log_plus_one`, `tanh`, `tan`,
`exponential_minus_one`) lowers to a linalg.generic on `complex<f32>`
elements whose body, after convert-complex-to-standard (which runs after
xla-approximate-math), calls `expf`, `cosf` and `sinf` (`atan2f`, `powf`,
`log1pf` ...) on scalars: no vector schedule takes complex elements, and
LLVM cannot vectorize the calls (c64 exp of 32768 numbers: 0.37 ms against
XLA's 0.30, sqrt of 65536 2.6 ms against 0.47, Zen 4). On the pairs, the same
formula runs on f32 tensors of the real and imaginary parts, which the real
schedules take, their exp, expm1, log, log1p, sin and cos xla-approximate-math's
polynomials (the others' formulas: complex_pair_formulas.py):

    exp(a + bi) = exp(a) cos(b) + i exp(a) sin(b)

(convert-complex-to-standard's form, so the numbers are what the complex loop
gives up to the real functions' own rounding: within 2 ulp.) Where a module
holds such a function, its other complex multiplies go as pairs too
(ac - bd, ad + bc): a module goes as pairs whole or not at all, and a
multiply alone stays complex (its complex loop, which LLVM vectorizes, beat
the pairs' strided kernels 2x). Tried before sin and cos had polynomials:
slower than the complex loop (0.62 ms against 0.39), libm calls per lane
either way, behind strided reads.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.numerics.complex_pair_formulas import FORMULAS, PartMath

# complex ops whose complex loop calls scalar libm functions (or, for sqrt,
# atan2, pow, cos and sin): as pairs, vector ones
COSTLY = ("stablehlo.exponential", *FORMULAS)


def has_costly(ops) -> bool:
    """Whether any op of ``ops`` is a c64 function of COSTLY."""
    return any(takes(op) for op in ops)


def takes(op: ir.Operation) -> bool:
    """Whether COSTLY ``op`` has a pair form here: on c64, whose f32 parts get
    xla-approximate-math's vector polynomials (f64 has none: c128 pairs would
    call libm per lane all the same, behind strided reads, and stay complex)."""
    return op.name in COSTLY and all(
        isinstance(v.type, ir.RankedTensorType) and
        str(ir.RankedTensorType(v.type).element_type) == "complex<f32>" for v in op.results)


def costly_pairs(builder, op: ir.Operation, pairs_type: ir.Type) -> ir.Value:
    """The pair form of COSTLY ``op`` (its operand's pairs built), before it:
    exp here, the others' formulas in complex_pair_formulas.py."""
    pairs = ir.RankedTensorType(pairs_type)
    part_type = ir.RankedTensorType.get(pairs.shape[:-1], pairs.element_type)
    a, b = (builder.part(builder.operand(op.operands[0]), i, part_type) for i in (0, 1))
    math = PartMath(builder, pairs.shape[:-1])
    formula = FORMULAS.get(op.name, exp)
    return builder.join(list(formula(math, a, b)), pairs_type)


def exp(m: PartMath, a: ir.Value, b: ir.Value):
    """convert-complex-to-standard's exp, step by step. Where exp(a) overflows,
    exp(a/2) twice (a finite part where cos(b) or sin(b) is small); where b is
    0, the imaginary part is +0 (not inf * 0)."""
    scale = m.apply("stablehlo.exponential", a)
    half = m.apply("stablehlo.exponential", m.mul(a, 0.5))
    over = m.compare("EQ", scale, float("inf"))
    parts = []
    for trig in ("stablehlo.cosine", "stablehlo.sine"):
        t = m.apply(trig, b)
        parts.append(m.select(over, m.mul(m.mul(half, t), half), m.mul(scale, t)))
    parts[1] = m.select(m.compare("EQ", b, 0.0), 0.0, parts[1])
    return parts
