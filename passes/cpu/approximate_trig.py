"""f32 sine and cosine as polynomials for xla-approximate-math.

LLVM lowers `llvm.sin`/`llvm.cos` on a vector to one `sinf`/`cosf` call per
lane (jnp.sin on 2 MB: 3.5 ms, XLA's the same; a c64 exp calls both per
number). Here: x = k*pi/2 + r with k = roundeven(x * 2/pi) and r reduced by
pi/2 in three f32 parts with fused multiply-adds (exact to ~2^-72 of pi/2,
enough for |x| <= 8192: k has 13 bits), then cephes' sinf/cosf polynomials on
|r| <= pi/4 and the quadrant k mod 4 picking sin or cos of r and the sign.
A vector with any lane beyond 8192 (or inf, NaN) takes libm's values for those
lanes (a branch on the lanes' or: libm's range reduction is exact to any size).
k = 0 keeps r = x exactly (a subnormal's sine is itself); sin(-0) = -0.
"""

from __future__ import annotations

_LIMIT = 8192.0
_TWO_OVER_PI = 0.6366197723675814
# pi/2 = _PIO2[0] + _PIO2[1] + _PIO2[2] + 1.1e-23, each an f32
_PIO2 = (1.5707963705062866, -4.371138828673793e-08, -1.7151245100058819e-15)
# cephes sinf: sin(r) = r + r^3 * S(r^2); cosf: cos(r) = 1 - r^2/2 + r^4 * C(r^2)
_SIN_P = (-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4)
_COS_P = (4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5)


def sine(e, x: str, quarter_turns: int) -> str:
    """sin(x) (``quarter_turns`` 0) or cos(x) (1, as sin(x + pi/2)) with the
    emitter ``e`` of approximate_math."""
    k = e.op("math.roundeven", e.op("arith.mulf", x, e.const(_TWO_OVER_PI)))
    negative_k = e.op("arith.negf", k)
    r = x
    for part in _PIO2:
        r = e.op("math.fma", negative_k, e.const(part), r)
    zero_k = e._emit(f"arith.cmpf oeq, {k}, {e.const(0.0)} : {e.float}")
    r = e._emit(f"arith.select {zero_k}, {x}, {r} : {e.bool}, {e.float}")
    z = e.op("arith.mulf", r, r)
    sin_r = e.op("math.fma", e.op("arith.mulf", z, r), e.poly(z, _SIN_P), r)
    cos_r = e.op("math.fma", e.op("arith.mulf", z, z), e.poly(z, _COS_P),
                 e.op("math.fma", z, e.const(-0.5), e.const(1.0)))
    # k of an inf, NaN or huge x (libm's lanes) clamped first: fptosi of it is poison
    bounded = e.op("arith.maxnumf", e.op("arith.minnumf", k, e.const(_LIMIT)), e.const(-_LIMIT))
    q = e._emit(f"arith.fptosi {bounded} : {e.float} to {e.int}")
    if quarter_turns:
        q = e.op("arith.addi", q, e.const(quarter_turns, True), type_=e.int)
    odd = _bit_set(e, q, 1)
    value = e._emit(f"arith.select {odd}, {cos_r}, {sin_r} : {e.bool}, {e.float}")
    flip = _bit_set(e, q, 2)
    value = e._emit(f"arith.select {flip}, {e.op('arith.negf', value)}, {value} : {e.bool}, {e.float}")
    if quarter_turns == 0:            # sin(+-0) = +-0: the polynomial's sum gives +0
        zero = e._emit(f"arith.cmpf oeq, {x}, {e.const(0.0)} : {e.float}")
        value = e._emit(f"arith.select {zero}, {x}, {value} : {e.bool}, {e.float}")
    return _libm_beyond(e, x, value, "math.sin" if quarter_turns == 0 else "math.cos")


def _bit_set(e, q: str, bit: int) -> str:
    masked = e.op("arith.andi", q, e.const(bit, True), type_=e.int)
    return e._emit(f"arith.cmpi ne, {masked}, {e.const(0, True)} : {e.int}")


def _libm_beyond(e, x: str, value: str, libm: str) -> str:
    """``value``, but libm's ``libm`` of x where |x| > _LIMIT or x is NaN, behind
    a branch taken only when some lane is."""
    big = e._emit(f"arith.cmpf ugt, {e.op('math.absf', x)}, {e.const(_LIMIT)} : {e.float}")
    any_big = e._emit(f"vector.reduction <or>, {big} : {e.bool} into i1") if e.vector else big
    result = e._emit(f"scf.if {any_big} -> ({e.float}) {{")
    exact = e._emit(f"{libm} {x} : {e.float}")
    mixed = e._emit(f"arith.select {big}, {exact}, {value} : {e.bool}, {e.float}")
    e.lines.append(f"    scf.yield {mixed} : {e.float}\n  }} else {{\n    scf.yield {value} : {e.float}\n  }}\n")
    return result
