"""The SIMT emulator's scalar ops: arith, math and complex over numpy values.

Every value is a numpy scalar (the same for every thread) or a 1-D array
with one element per thread; numpy broadcasting mixes the two. Integers are
stored signless in a signed numpy type of their width (``i1`` as ``bool``,
widths other than 8/16/32/64 sign-wrapped in ``int64``); ops that care
about signedness read them through ``signed``/``unsigned``. Math on f16,
bf16 and fp8 runs in f32 and rounds back, as the NVVM lowering does.
"""

from __future__ import annotations

import math

import numpy as np

from xlac.dtypes import numpy_dtype

_NATIVE = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


# ---- types -----------------------------------------------------------------

def storage_dtype(type_text: str) -> np.dtype:
    """The numpy type that holds a scalar of MLIR type ``type_text``."""
    if type_text == "index":
        return np.dtype(np.int64)
    if type_text.startswith("i") and type_text[1:].isdigit():
        width = int(type_text[1:])
        if width == 1:
            return np.dtype(np.bool_)
        if width > 64:
            raise ValueError(f"integer type {type_text} is wider than 64 bits")
        return np.dtype(_NATIVE.get(width, np.int64))
    return numpy_dtype(type_text)


def int_width(type_text: str) -> int:
    return 64 if type_text == "index" else int(type_text[1:])


def scalar(value, dtype: np.dtype):
    """``value`` as a numpy scalar of ``dtype`` (ints wrap to the width)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.bool_(bool(value))
    if dtype.kind in "iu":
        return np.array(int(value) & 0xFFFFFFFFFFFFFFFF, np.uint64).astype(dtype)[()]
    return np.array(value).astype(dtype)[()]


def fix(x):
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def signed(x, width: int):
    """The signed value of a signless integer, as int64 (``i1`` true is -1)."""
    x = np.asarray(x)
    if width == 1:
        return fix(-x.astype(np.int64))
    return fix(x.astype(np.int64))


def unsigned(x, width: int):
    """The unsigned value: uint64 for 64 bits, else a non-negative int64."""
    x = np.asarray(x)
    if width == 64:
        return fix(x.astype(np.int64).astype(np.uint64))
    return fix(x.astype(np.int64) & ((1 << width) - 1))


def pack(x, width: int):
    """Any int64/uint64 value -> the storage of a ``width``-bit signless integer."""
    x = np.asarray(x)
    if width == 1:
        return fix((x.astype(np.int64) & 1).astype(np.bool_))
    if width in _NATIVE:
        return fix(x.astype(np.uint64 if x.dtype == np.uint64 else np.int64).astype(_NATIVE[width]))
    half = 1 << (width - 1)
    return fix(((x.astype(np.int64) + half) & ((1 << width) - 1)) - half)


def where(cond, a, b):
    """Per-thread choice; a uniform condition picks one side without copying."""
    if np.ndim(cond) == 0:
        return a if cond else b
    if a is b:
        return a
    return np.where(cond, a, b)


# ---- integer ops ---------------------------------------------------------------

def _nonzero(b):
    return where(b == 0, np.ones_like(b), b)      # x/0 is UB: only inactive threads reach it


def _divsi(a, b):
    b = _nonzero(b)
    q = a // b
    return q + ((a - q * b != 0) & ((a < 0) != (b < 0)))


def _ceildivsi(a, b):
    b = _nonzero(b)
    q = a // b
    return q + (a - q * b != 0)


def _shift(kind):
    def run(a, b, w):
        amount = unsigned(b, w)
        ok = amount < w
        amount = np.minimum(amount, w - 1).astype(np.int64 if w < 64 else np.uint64)
        if kind == "shli":
            value = unsigned(a, w) << amount
            return pack(where(ok, value, 0 * value), w)
        if kind == "shrui":
            value = unsigned(a, w) >> amount
            return pack(where(ok, value, 0 * value), w)
        return pack(signed(a, w) >> np.minimum(unsigned(b, w), w - 1).astype(np.int64), w)
    return run


def _signed_op(f):
    return lambda a, b, w: pack(f(signed(a, w), signed(b, w)), w)


def _unsigned_op(f):
    return lambda a, b, w: pack(f(unsigned(a, w), unsigned(b, w)), w)


def _plain_op(f, boolean):
    """+, -, *, &, |, ^ : numpy wraps natively; i1 and odd widths go through int64."""
    def run(a, b, w):
        if w == 1:
            return boolean(a, b)
        if w in _NATIVE:
            return f(a, b)
        return pack(f(signed(a, w), signed(b, w)), w)
    return run


INT_BINARY = {
    "arith.addi": _plain_op(np.add, np.logical_xor),
    "arith.subi": _plain_op(np.subtract, np.logical_xor),
    "arith.muli": _plain_op(np.multiply, np.logical_and),
    "arith.andi": _plain_op(np.bitwise_and, np.logical_and),
    "arith.ori": _plain_op(np.bitwise_or, np.logical_or),
    "arith.xori": _plain_op(np.bitwise_xor, np.logical_xor),
    "arith.divsi": _signed_op(_divsi),
    "arith.remsi": _signed_op(lambda a, b: a - _divsi(a, b) * _nonzero(b)),
    "arith.floordivsi": _signed_op(lambda a, b: a // _nonzero(b)),
    "arith.ceildivsi": _signed_op(_ceildivsi),
    "arith.divui": _unsigned_op(lambda a, b: a // _nonzero(b)),
    "arith.remui": _unsigned_op(lambda a, b: a % _nonzero(b)),
    "arith.ceildivui": _unsigned_op(lambda a, b: a // _nonzero(b) + (a % _nonzero(b) != 0)),
    "arith.maxsi": _signed_op(np.maximum),
    "arith.minsi": _signed_op(np.minimum),
    "arith.maxui": _unsigned_op(np.maximum),
    "arith.minui": _unsigned_op(np.minimum),
    "arith.shli": _shift("shli"),
    "arith.shrui": _shift("shrui"),
    "arith.shrsi": _shift("shrsi"),
}

CMPI = {
    "eq": lambda a, b, w: a == b, "ne": lambda a, b, w: a != b,
    "slt": lambda a, b, w: signed(a, w) < signed(b, w),
    "sle": lambda a, b, w: signed(a, w) <= signed(b, w),
    "sgt": lambda a, b, w: signed(a, w) > signed(b, w),
    "sge": lambda a, b, w: signed(a, w) >= signed(b, w),
    "ult": lambda a, b, w: unsigned(a, w) < unsigned(b, w),
    "ule": lambda a, b, w: unsigned(a, w) <= unsigned(b, w),
    "ugt": lambda a, b, w: unsigned(a, w) > unsigned(b, w),
    "uge": lambda a, b, w: unsigned(a, w) >= unsigned(b, w),
}


def _unordered(a, b):
    return np.isnan(a) | np.isnan(b)


CMPF = {
    "false": lambda a, b: np.zeros_like(a == b), "true": lambda a, b: np.ones_like(a == b),
    "oeq": lambda a, b: a == b, "ogt": lambda a, b: a > b, "oge": lambda a, b: a >= b,
    "olt": lambda a, b: a < b, "ole": lambda a, b: a <= b,
    "one": lambda a, b: (a != b) & ~_unordered(a, b), "ord": lambda a, b: ~_unordered(a, b),
    "ueq": lambda a, b: (a == b) | _unordered(a, b), "ugt": lambda a, b: (a > b) | _unordered(a, b),
    "uge": lambda a, b: (a >= b) | _unordered(a, b), "ult": lambda a, b: (a < b) | _unordered(a, b),
    "ule": lambda a, b: (a <= b) | _unordered(a, b), "une": lambda a, b: a != b,
    "uno": _unordered,
}


# ---- float ops ----------------------------------------------------------------

def _both_zero(a, b):
    return (a == 0) & (b == 0)


def maximumf(a, b):
    """NaN-propagating max with -0 < +0 (arith.maximumf, PTX max.NaN)."""
    return where(_both_zero(a, b), where(np.signbit(a), b, a), np.maximum(a, b))


def minimumf(a, b):
    return where(_both_zero(a, b), where(np.signbit(a), a, b), np.minimum(a, b))


def _wide(f):
    """A float function evaluated in f32 (or f64) and rounded back to the input type."""
    def run(*xs):
        dtype = np.result_type(*xs)
        if dtype.kind == "c":
            return fix(np.asarray(f(*xs)).astype(dtype))
        work = np.float64 if dtype == np.float64 else np.float32
        return fix(np.asarray(f(*[np.asarray(x).astype(work) for x in xs])).astype(dtype))
    return run


def _elementwise(f):
    """A python ``math`` function over every element (computed in f64)."""
    vector = np.frompyfunc(f, 1, 1)
    return lambda x: vector(np.asarray(x, np.float64)).astype(np.float64)


def _erf(x):
    return _elementwise(math.erf)(x)


def _round_half_away(x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _fma(a, b, c):
    if np.asarray(a).dtype == np.float64:
        return a * b + c
    return np.asarray(a, np.float64) * b + c        # exact product in f64: one rounding at the end


FLOAT_BINARY = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
    "arith.divf": np.divide, "arith.remf": np.fmod,
    "arith.maximumf": maximumf, "arith.minimumf": minimumf,
    "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,
    "math.atan2": _wide(np.arctan2), "math.powf": _wide(np.power),
    "math.copysign": np.copysign,
}

MATH_UNARY = {
    "math.exp": np.exp, "math.exp2": np.exp2, "math.expm1": np.expm1,
    "math.log": np.log, "math.log2": np.log2, "math.log10": np.log10, "math.log1p": np.log1p,
    "math.sin": np.sin, "math.cos": np.cos, "math.tan": np.tan,
    "math.asin": np.arcsin, "math.acos": np.arccos, "math.atan": np.arctan,
    "math.sinh": np.sinh, "math.cosh": np.cosh, "math.tanh": np.tanh,
    "math.asinh": np.arcsinh, "math.acosh": np.arccosh, "math.atanh": np.arctanh,
    "math.sqrt": np.sqrt, "math.rsqrt": lambda x: 1 / np.sqrt(x), "math.cbrt": np.cbrt,
    "math.erf": _erf, "math.erfc": _elementwise(math.erfc),
    "math.absf": np.abs, "math.ceil": np.ceil, "math.floor": np.floor, "math.trunc": np.trunc,
    "math.round": _round_half_away, "math.roundeven": np.rint,
}
MATH_UNARY = {name: _wide(f) for name, f in MATH_UNARY.items()}
MATH_UNARY["arith.negf"] = np.negative
MATH_UNARY["math.fma"] = _wide(_fma)

MATH_PREDICATES = {"math.isnan": np.isnan, "math.isinf": np.isinf, "math.isfinite": np.isfinite}


# ---- conversions -----------------------------------------------------------------

def fptoint(x, width: int, is_signed: bool):
    """Float -> integer as PTX cvt.rzi does: truncate, saturate, NaN -> 0."""
    f = np.asarray(x, np.float64)
    f = np.where(np.isnan(f), 0.0, np.trunc(f))
    if is_signed:
        low, high = -(2.0 ** (width - 1)), 2.0 ** (width - 1)
        bottom, top = -(1 << (width - 1)), (1 << (width - 1)) - 1
    else:
        low, high, bottom, top = 0.0, 2.0 ** width, 0, (1 << width) - 1
    work = np.int64 if is_signed or width < 64 else np.uint64
    inside = np.where((f >= low) & (f < high), f, 0).astype(work)
    return pack(np.where(f >= high, work(top), np.where(f < low, work(bottom), inside)), width)


def inttofp(x, width: int, is_signed: bool, dtype):
    value = signed(x, width) if is_signed else unsigned(x, width)
    if np.dtype(dtype).itemsize < 4 or np.dtype(dtype).kind == "V":
        return fix(np.asarray(value).astype(np.float64).astype(np.float32).astype(dtype))
    return fix(np.asarray(value).astype(dtype))


def bitcast(x, dtype):
    return fix(np.asarray(x).view(dtype)) if np.asarray(x).dtype.itemsize == np.dtype(dtype).itemsize \
        else fix(np.asarray(x).astype(dtype))


def popcount(x, width: int):
    u = np.asarray(unsigned(x, width)).astype(np.uint64)
    count = np.zeros(u.shape, np.int64)
    for bit in range(width):
        count += ((u >> np.uint64(bit)) & np.uint64(1)).astype(np.int64)
    return pack(count, width)


def count_leading_zeros(x, width: int):
    u = np.asarray(unsigned(x, width)).astype(np.uint64)
    count = np.full(u.shape, width, np.int64)
    for bit in range(width):                     # the highest set bit wins
        count = np.where((u >> np.uint64(bit)) & np.uint64(1), width - 1 - bit, count)
    return pack(count, width)


def count_trailing_zeros(x, width: int):
    u = np.asarray(unsigned(x, width)).astype(np.uint64)
    count = np.full(u.shape, width, np.int64)
    for bit in reversed(range(width)):           # the lowest set bit wins
        count = np.where((u >> np.uint64(bit)) & np.uint64(1), bit, count)
    return pack(count, width)


def ipowi(a, b, width: int):
    base, exponent = np.asarray(signed(a, width)), np.asarray(signed(b, width))
    base, exponent = np.broadcast_arrays(base, exponent)
    result = np.ones(base.shape, np.int64)
    result = np.where(exponent < 0, np.where(base == 1, 1, np.where(base == -1, 1 - 2 * (exponent & 1), 0)),
                      result)
    power, e = base.copy(), np.where(exponent < 0, 0, exponent)
    while np.any(e > 0):
        result = np.where(e & 1, result * power, result)
        power, e = power * power, e >> 1
    return pack(result, width)


# ---- complex -------------------------------------------------------------------------

def make_complex(re, im, dtype):
    re, im = np.broadcast_arrays(np.asarray(re), np.asarray(im))
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return fix(out)


def _complex_sign(z):
    magnitude = np.abs(z)
    return np.where(magnitude == 0, z, z / np.where(magnitude == 0, 1, magnitude))


COMPLEX_UNARY = {
    "complex.neg": np.negative, "complex.conj": np.conj, "complex.exp": np.exp, "complex.log": np.log,
    "complex.sqrt": np.sqrt, "complex.sin": np.sin, "complex.cos": np.cos, "complex.tan": np.tan,
    "complex.tanh": np.tanh, "complex.expm1": np.expm1, "complex.log1p": np.log1p,
    "complex.rsqrt": lambda z: 1 / np.sqrt(z), "complex.sign": _complex_sign,
}
COMPLEX_UNARY = {name: _wide(f) for name, f in COMPLEX_UNARY.items()}

COMPLEX_BINARY = {
    "complex.add": np.add, "complex.sub": np.subtract, "complex.mul": np.multiply,
    "complex.div": np.divide, "complex.pow": np.power,
}
