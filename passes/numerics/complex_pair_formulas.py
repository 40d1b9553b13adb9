"""c64 functions written on the parts' f32 tensors, for complex_pair_math.py.

Each takes the real and imaginary parts ``a`` and ``b`` (f32 tensors of the
complex tensor's shape) and returns the result's two parts, in StableHLO ops
on real tensors: the real schedules take them, and xla-approximate-math makes
their f32 exp, expm1, sin and cos vector polynomials. The special values are
C99's (what the reference interpreter's std::complex and numpy give):
infinities, NaNs, signed zeros and the branch cut of sqrt along the negative
real axis.
"""

from __future__ import annotations

import math

import numpy as np

from xlac.mlir import ir

_INF = float("inf")


class PartMath:
    """StableHLO ops on part tensors, built by ``builder`` (complex_as_pairs' _Builder)."""

    def __init__(self, builder, shape):
        self.builder, self.shape = builder, list(shape)

    def apply(self, name, *values, result=None, attributes=None) -> ir.Value:
        result = result or values[0].type
        return self.builder.create(name, list(values), result, attributes).result

    def typed(self, element: ir.Type) -> ir.Type:
        return ir.RankedTensorType.get(self.shape, element)

    def constant(self, value: float, like: ir.Value) -> ir.Value:
        element = ir.RankedTensorType(like.type).element_type
        return self.apply("stablehlo.constant", result=like.type, attributes={
            "value": ir.DenseElementsAttr.get_splat(like.type, ir.FloatAttr.get(element, value))})

    def compare(self, direction: str, x: ir.Value, y) -> ir.Value:
        """``x direction y`` (``y`` a value or a float) as an i1 tensor."""
        if not isinstance(y, ir.Value):
            y = self.constant(y, x)
        return self.apply("stablehlo.compare", x, y, result=self.typed(ir.IntegerType.get_signless(1)),
                          attributes={"comparison_direction": ir.Attribute.parse(
                              f"#stablehlo<comparison_direction {direction}>")})

    def select(self, flag: ir.Value, x, y) -> ir.Value:
        """``flag ? x : y``, a float ``x`` or ``y`` splat in the other's type."""
        if not isinstance(x, ir.Value):
            x = self.constant(x, y)
        if not isinstance(y, ir.Value):
            y = self.constant(y, x)
        return self.apply("stablehlo.select", flag, x, y, result=x.type)

    def add(self, x, y):
        return self.apply("stablehlo.add", x, y)

    def sub(self, x, y):
        return self.apply("stablehlo.subtract", x, y)

    def mul(self, x, y):
        return self.apply("stablehlo.multiply", x, y if isinstance(y, ir.Value) else self.constant(y, x))

    def div(self, x, y):
        return self.apply("stablehlo.divide", x, y)

    def either(self, *flags):
        out = flags[0]
        for flag in flags[1:]:
            out = self.apply("stablehlo.or", out, flag)
        return out

    def both(self, x, y):
        return self.apply("stablehlo.and", x, y)

    def negative(self, x: ir.Value) -> ir.Value:
        """Whether ``x``'s sign bit is set (-0 and -NaN included)."""
        element = ir.RankedTensorType(x.type).element_type
        bits = self.apply("stablehlo.bitcast_convert", x,
                          result=self.typed(ir.IntegerType.get_signless(ir.FloatType(element).width)))
        zero = self.apply("stablehlo.constant", result=bits.type, attributes={
            "value": ir.DenseElementsAttr.get_splat(bits.type, ir.IntegerAttr.get(
                ir.RankedTensorType(bits.type).element_type, 0))})
        return self.compare("LT", bits, zero)

    def copysign(self, magnitude: ir.Value, sign: ir.Value) -> ir.Value:
        """|magnitude| with ``sign``'s sign bit."""
        size = self.apply("stablehlo.abs", magnitude)
        return self.select(self.negative(sign), self.apply("stablehlo.negate", size), size)

    def convert(self, x: ir.Value, element: ir.Type) -> ir.Value:
        return self.apply("stablehlo.convert", x, result=self.typed(element))


def sqrt(m: PartMath, a: ir.Value, b: ir.Value):
    """The principal square root, algebraically (no atan2, pow, cos or sin):
    t = sqrt((|a| + |z|) / 2), then (t, b / 2t) where a >= 0 and
    (|b| / 2t, copysign(t, b)) where a < 0, in f64 (|z|^2 of any f32 parts
    neither overflows nor underflows there), rounded once to f32. Then C99's
    forms: sqrt(+-0 +- 0i) = +0 +- 0i; an infinite b gives +inf + bi, for any
    a; a = +inf gives +inf (+ NaN i where b is NaN); a = -inf gives
    +-inf i (NaN + +-inf i where b is NaN)."""
    f32, f64 = ir.RankedTensorType(a.type).element_type, ir.F64Type.get()
    x, y = m.convert(a, f64), m.convert(b, f64)
    radius = m.apply("stablehlo.sqrt", m.add(m.mul(x, x), m.mul(y, y)))
    t = m.apply("stablehlo.sqrt", m.mul(m.add(m.apply("stablehlo.abs", x), radius), 0.5))
    q = m.div(m.mul(y, 0.5), t)
    right = m.compare("GE", x, 0.0)
    re = m.convert(m.select(right, t, m.apply("stablehlo.abs", q)), f32)
    im = m.convert(m.select(right, q, m.copysign(t, y)), f32)
    zero = m.both(m.compare("EQ", a, 0.0), m.compare("EQ", b, 0.0))
    b_inf = m.compare("EQ", m.apply("stablehlo.abs", b), _INF)
    re = m.select(m.either(b_inf, m.compare("EQ", a, _INF)), _INF, m.select(zero, 0.0, re))
    im = m.select(m.either(b_inf, zero), b,
                  m.select(m.compare("EQ", a, -_INF), m.copysign(m.constant(_INF, b), b), im))
    return re, im


def tanh(m: PartMath, a: ir.Value, b: ir.Value):
    """convert-complex-to-standard's (XLA's) tanh, with expm1 for accuracy near 0:
    e1 = expm1(2a), e2 = expm1(-2a), d = e1 + e2 + 4 cos^2 b (= 2 cosh 2a + 2 cos 2b),
    tanh = ((e1 - e2) / d, 4 cos b sin b / d); where e1 + e2 is inf, the real part
    is copysign(1, a); a NaN imaginary part (b inf or NaN) makes the real part NaN
    unless a is infinite, and the imaginary part 0 where a is; a zero a or b
    stays itself (C99's tanh(+-0 + inf i) = +-0 + NaN i)."""
    twice = m.add(a, a)
    e1 = m.apply("stablehlo.exponential_minus_one", twice)
    e2 = m.apply("stablehlo.exponential_minus_one", m.apply("stablehlo.negate", twice))
    cos, sin = m.apply("stablehlo.cosine", b), m.apply("stablehlo.sine", b)
    sums = m.add(e1, e2)
    den = m.add(sums, m.mul(m.mul(cos, cos), 4.0))
    numerator = m.mul(m.mul(cos, sin), 4.0)
    re = m.select(m.compare("EQ", sums, _INF), m.copysign(m.constant(1.0, a), a),
                  m.div(m.sub(e1, e2), den))
    im = m.div(numerator, den)
    a_inf = m.compare("EQ", m.apply("stablehlo.abs", a), _INF)
    im_nan = m.compare("NE", numerator, numerator)
    re = m.select(m.both(im_nan, m.apply("stablehlo.not", a_inf)), float("nan"), re)
    re = m.select(m.compare("EQ", a, 0.0), a, re)
    im = m.select(m.compare("EQ", b, 0.0), b, m.select(m.both(a_inf, im_nan), 0.0, im))
    return re, im


def tan(m: PartMath, a: ir.Value, b: ir.Value):
    """tan(z) = -i tanh(iz): tanh of (-b, a), its parts swapped, the new imaginary negated."""
    re, im = tanh(m, m.apply("stablehlo.negate", b), a)
    return im, m.apply("stablehlo.negate", re)


# cos(b) - 1 = -b^2/2 + b^4 P(b^2) for b^2 < _COSM1_SMALL (convert-complex-to-standard's)
_COSM1_P = (4.73775072e-14, -1.14702848e-11, 2.08767537e-9, -2.755732e-7, 2.48015876e-5,
            -0.00138888892, 0.0416666679)
_COSM1_SMALL = 0.61685


def expm1(m: PartMath, a: ir.Value, b: ir.Value):
    """convert-complex-to-standard's expm1: e = expm1(a), c = cos(b) - 1 (a
    polynomial in b^2 where b is small), (e (c + 1) + c, (e + 1) sin b); a zero b stays b."""
    e = m.apply("stablehlo.exponential_minus_one", a)
    square = m.mul(b, b)
    series = m.constant(_COSM1_P[0], b)
    for coefficient in _COSM1_P[1:]:
        series = m.add(m.mul(series, square), m.constant(coefficient, b))
    small = m.add(m.mul(m.mul(square, square), series), m.mul(square, -0.5))
    cosm1 = m.select(m.compare("GE", square, _COSM1_SMALL),
                     m.add(m.apply("stablehlo.cosine", b), m.constant(-1.0, b)), small)
    re = m.add(m.mul(e, m.add(cosm1, m.constant(1.0, b))), cosm1)
    im = m.mul(m.add(e, m.constant(1.0, a)), m.apply("stablehlo.sine", b))
    return re, m.select(m.compare("EQ", b, 0.0), b, im)


# atan(t) = t + t^3 P(t^2) on [0, 1] (highest power first; fitted here as
# xla-approximate-math's are, then reweighted toward minimax: max relative error 4e-10)
_ATAN_P = (0.0011136413750702612, -0.007317614923427233, 0.022540130567784512,
           -0.04469164099220359, 0.06741837585320933, -0.08811262002177501,
           0.11058291137607193, -0.14279847670572526, 0.1999967267651675,
           -0.33333326958396475)


def _plus(m: PartMath, constant: float, x: ir.Value) -> ir.Value:
    """constant + x, the constant in two f32 parts (its low part added to x first)."""
    high = float(np.float32(constant))
    return m.add(m.constant(high, x), m.add(x, m.constant(constant - high, x)))


def atan2(m: PartMath, y: ir.Value, x: ir.Value) -> ir.Value:
    """atan2(y, x) as a polynomial (no libm call per lane): t = min(|x|, |y|) /
    max(|x|, |y|) in [0, 1], r = atan(t) a polynomial in t, then pi/2 - r
    where |y| > |x|, pi - r where x's sign bit is set (pi/2 and pi in two f32
    parts), with
    y's sign. t is 0 where both are 0 and 1 where both are infinite: C99's
    atan2(+-0, -0) = +-pi, atan2(+-inf, -inf) = +-3pi/4 ...; NaN stays NaN."""
    ax, ay = m.apply("stablehlo.abs", x), m.apply("stablehlo.abs", y)
    big, small = m.apply("stablehlo.maximum", ax, ay), m.apply("stablehlo.minimum", ax, ay)
    t = m.select(m.compare("EQ", big, 0.0), 0.0,
                 m.select(m.compare("EQ", small, _INF), 1.0, m.div(small, big)))
    z = m.mul(t, t)
    series = m.constant(_ATAN_P[0], t)
    for coefficient in _ATAN_P[1:]:
        series = m.add(m.mul(series, z), m.constant(coefficient, t))
    r = m.add(m.mul(m.mul(series, z), t), t)
    r = m.select(m.compare("GT", ay, ax), _plus(m, math.pi / 2, m.apply("stablehlo.negate", r)), r)
    r = m.select(m.negative(x), _plus(m, math.pi, m.apply("stablehlo.negate", r)), r)
    nan = m.either(m.compare("NE", x, x), m.compare("NE", y, y))
    return m.select(nan, m.add(x, y), m.copysign(r, y))


def _modulus_log(m: PartMath, a: ir.Value, b: ir.Value, log_big: ir.Value,
                 excess: ir.Value) -> ir.Value:
    """log|a + bi|: with big and small the larger and smaller of |a| and |b|,
    log(big) (``log_big``) + log1p((small / big)^2) / 2, no overflow in |z|;
    where |z|^2 is within (1/2, 2), log1p(``excess``) / 2 instead, ``excess``
    being |z|^2 - 1 in f64 (exact enough: an f32's square is exact there), so
    no cancellation near |z| = 1; +inf where either part is infinite (C99,
    a NaN other part included)."""
    ax, ay = m.apply("stablehlo.abs", a), m.apply("stablehlo.abs", b)
    big, small = m.apply("stablehlo.maximum", ax, ay), m.apply("stablehlo.minimum", ax, ay)
    q = m.div(small, big)
    half = m.mul(m.apply("stablehlo.log_plus_one", m.mul(q, q)), 0.5)
    far = m.add(log_big(big), m.select(m.compare("EQ", big, 0.0), 0.0, half))
    near = m.mul(m.apply("stablehlo.log_plus_one", m.convert(excess, ir.RankedTensorType(a.type).element_type)),
                 0.5)
    re = m.select(m.both(m.compare("GT", excess, -0.5), m.compare("LT", excess, 1.0)), near, far)
    return m.select(m.either(m.compare("EQ", ax, _INF), m.compare("EQ", ay, _INF)), _INF, re)


def _wide(m: PartMath, x: ir.Value) -> ir.Value:
    return m.convert(x, ir.F64Type.get())


def log(m: PartMath, a: ir.Value, b: ir.Value):
    """log z = (log|z|, atan2(b, a)); log(+-0 +- 0i) = -inf + (+-0 or +-pi) i."""
    x, y = _wide(m, a), _wide(m, b)
    excess = m.add(m.mul(x, x), m.sub(m.mul(y, y), m.constant(1.0, y)))
    return _modulus_log(m, a, b, lambda big: m.apply("stablehlo.log", big), excess), atan2(m, b, a)


def log1p(m: PartMath, a: ir.Value, b: ir.Value):
    """log(1 + z) as log of c + bi, c = a + 1: log(max(|c|, |b|)) as log1p(a)
    where c > |b| (exact for small z), else log of the larger; |c + bi|^2 - 1
    as a (a + 2) + b^2 in f64; the imaginary part atan2(b, c)."""
    c = m.add(a, m.constant(1.0, a))
    x, y = _wide(m, a), _wide(m, b)
    excess = m.add(m.mul(x, m.add(x, m.constant(2.0, x))), m.mul(y, y))
    bigger = m.compare("GT", c, m.apply("stablehlo.abs", b))
    re = _modulus_log(m, c, b, lambda big: m.select(bigger, m.apply("stablehlo.log_plus_one", a),
                                                    m.apply("stablehlo.log", big)), excess)
    return re, atan2(m, b, c)


FORMULAS = {"stablehlo.log": log, "stablehlo.log_plus_one": log1p,
            "stablehlo.sqrt": sqrt, "stablehlo.tanh": tanh, "stablehlo.tan": tan,
            "stablehlo.exponential_minus_one": expm1}
