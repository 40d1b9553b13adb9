"""Complex functions on the parts' pairs for xla-complex-as-pairs.

A complex `exponential` lowers to a linalg.generic on `complex<f32>` elements
whose body, after convert-complex-to-standard (which runs after
xla-approximate-math), calls `expf`, `cosf` and `sinf` on scalars: no vector
schedule takes complex elements, and LLVM cannot vectorize the calls (c64 exp
of 32768 numbers: 0.37 ms against XLA's 0.30, Zen 4). On the pairs, the same
formula runs on f32 tensors of the real and imaginary parts, which the real
schedules take, their exp, sin and cos xla-approximate-math's polynomials:

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

# complex ops whose complex loop calls scalar libm functions: as pairs, vector ones
COSTLY = ("stablehlo.exponential",)


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
    convert-complex-to-standard's exp, step by step. Where exp(a) overflows,
    exp(a/2) twice (a finite part where cos(b) or sin(b) is small); where b is
    0, the imaginary part is +0 (not inf * 0)."""
    pairs = ir.RankedTensorType(pairs_type)
    part_type = ir.RankedTensorType.get(pairs.shape[:-1], pairs.element_type)
    a, b = (builder.part(builder.operand(op.operands[0]), i, part_type) for i in (0, 1))

    def apply(name, *values, result=part_type, attributes=None):
        return builder.create(name, list(values), result, attributes).result

    def constant(value):
        return apply("stablehlo.constant", attributes={"value": ir.DenseElementsAttr.get_splat(
            part_type, ir.FloatAttr.get(pairs.element_type, value))})

    def equal(x, y):
        flags = ir.RankedTensorType.get(pairs.shape[:-1], ir.IntegerType.get_signless(1))
        return apply("stablehlo.compare", x, y, result=flags, attributes={
            "comparison_direction": ir.Attribute.parse("#stablehlo<comparison_direction EQ>")})
    mul = "stablehlo.multiply"
    scale = apply("stablehlo.exponential", a)
    half = apply("stablehlo.exponential", apply(mul, a, constant(0.5)))
    over = equal(scale, constant(float("inf")))
    parts = []
    for trig in ("stablehlo.cosine", "stablehlo.sine"):
        t = apply(trig, b)
        parts.append(apply("stablehlo.select", over, apply(mul, apply(mul, half, t), half),
                           apply(mul, scale, t)))
    parts[1] = apply("stablehlo.select", equal(b, constant(0.0)), constant(0.0), parts[1])
    return builder.join(parts, pairs_type)
