"""The SIMT emulator's handlers of arith, math and complex ops:
``(launch, op, mask)`` -> results in ``launch.env`` (the values: simt_ops)."""

from __future__ import annotations

import numpy as np

from xlac_emulator.simt_ops import (
    CMPF,
    CMPI,
    COMPLEX_BINARY,
    COMPLEX_UNARY,
    FLOAT_BINARY,
    INT_BINARY,
    MATH_PREDICATES,
    MATH_UNARY,
    bitcast,
    count_leading_zeros,
    count_trailing_zeros,
    fix,
    fptoint,
    int_width,
    inttofp,
    ipowi,
    make_complex,
    pack,
    popcount,
    signed,
    storage_dtype,
    unsigned,
)

# ---- handlers: (launch, op, mask) -> results in launch.env --------------------------------

def _int_binary(f):
    def run(launch, op, mask):
        env = launch.env
        env[op.res[0]] = f(env[op.args[0]], env[op.args[1]], int_width(op.atypes[0]))
    return run


def _float_binary(f):
    def run(launch, op, mask):
        env = launch.env
        env[op.res[0]] = fix(f(env[op.args[0]], env[op.args[1]]))
    return run


def _unary(f):
    def run(launch, op, mask):
        env = launch.env
        env[op.res[0]] = fix(f(*[env[s] for s in op.args]))
    return run


def _cmpi(launch, op, mask):
    env = launch.env
    env[op.res[0]] = fix(CMPI[op.attrs["mode"]](env[op.args[0]], env[op.args[1]], int_width(op.atypes[0])))


def _cmpf(launch, op, mask):
    env = launch.env
    env[op.res[0]] = fix(CMPF[op.attrs["mode"]](env[op.args[0]], env[op.args[1]]))


def _constant(launch, op, mask):
    launch.env[op.res[0]] = op.attrs["constant"]


def _int_convert(read):
    """extsi/extui/trunci/index_cast(ui): read the source signed or unsigned, wrap to the target."""
    def run(launch, op, mask):
        x = launch.env[op.args[0]]
        launch.env[op.res[0]] = pack(read(x, int_width(op.atypes[0])), int_width(op.rtypes[0]))
    return run


def _to_float(is_signed):
    def run(launch, op, mask):
        launch.env[op.res[0]] = inttofp(launch.env[op.args[0]], int_width(op.atypes[0]), is_signed,
                                        storage_dtype(op.rtypes[0]))
    return run


def _to_int(is_signed):
    def run(launch, op, mask):
        launch.env[op.res[0]] = fptoint(launch.env[op.args[0]], int_width(op.rtypes[0]), is_signed)
    return run


def _float_cast(launch, op, mask):
    launch.env[op.res[0]] = fix(np.asarray(launch.env[op.args[0]]).astype(storage_dtype(op.rtypes[0])))


def _bitcast(launch, op, mask):
    launch.env[op.res[0]] = bitcast(launch.env[op.args[0]], storage_dtype(op.rtypes[0]))


def _math_predicate(f):
    def run(launch, op, mask):
        launch.env[op.res[0]] = fix(f(launch.env[op.args[0]]))
    return run


def _fpowi(launch, op, mask):
    x, n = launch.env[op.args[0]], launch.env[op.args[1]]
    exponent = np.asarray(signed(n, int_width(op.atypes[1])))
    dtype = np.asarray(x).dtype
    work = np.float64 if dtype == np.float64 else np.float32
    launch.env[op.res[0]] = fix(np.power(np.asarray(x).astype(work), exponent.astype(work)).astype(dtype))


def _int_unary(f):
    def run(launch, op, mask):
        launch.env[op.res[0]] = f(launch.env[op.args[0]], int_width(op.atypes[0]))
    return run


def _complex_create(launch, op, mask):
    env = launch.env
    env[op.res[0]] = make_complex(env[op.args[0]], env[op.args[1]], storage_dtype(op.rtypes[0]))


def _complex_part(part):
    def run(launch, op, mask):
        value = part(np.asarray(launch.env[op.args[0]]))
        launch.env[op.res[0]] = fix(value.astype(storage_dtype(op.rtypes[0])))
    return run


HANDLERS = {
    "arith.constant": _constant, "complex.constant": _constant,
    "arith.cmpi": _cmpi, "arith.cmpf": _cmpf,
    "arith.extsi": _int_convert(signed), "arith.extui": _int_convert(unsigned),
    "arith.trunci": _int_convert(unsigned), "arith.index_cast": _int_convert(signed),
    "arith.index_castui": _int_convert(unsigned),
    "arith.sitofp": _to_float(True), "arith.uitofp": _to_float(False),
    "arith.fptosi": _to_int(True), "arith.fptoui": _to_int(False),
    "arith.extf": _float_cast, "arith.truncf": _float_cast, "arith.bitcast": _bitcast,
    "math.fpowi": _fpowi, "math.ipowi": _int_binary(ipowi),
    "math.absi": _int_unary(lambda x, w: pack(np.abs(signed(x, w)), w)),
    "math.ctpop": _int_unary(popcount), "math.ctlz": _int_unary(count_leading_zeros),
    "math.cttz": _int_unary(count_trailing_zeros),
    "complex.create": _complex_create, "complex.re": _complex_part(np.real),
    "complex.im": _complex_part(np.imag), "complex.abs": _complex_part(np.abs),
    "complex.angle": _complex_part(np.angle),
    "complex.eq": _float_binary(np.equal), "complex.neq": _float_binary(np.not_equal),
    **{name: _int_binary(f) for name, f in INT_BINARY.items()},
    **{name: _float_binary(f) for name, f in FLOAT_BINARY.items()},
    **{name: _unary(f) for name, f in MATH_UNARY.items()},
    **{name: _math_predicate(f) for name, f in MATH_PREDICATES.items()},
    **{name: _unary(f) for name, f in COMPLEX_UNARY.items()},
    **{name: _float_binary(f) for name, f in COMPLEX_BINARY.items()},
}
