"""The integer keys the top-k helper compares elements by.

A key is an integer of the element's width whose signed order is the order
the top-k asks for, so one `arith.cmpi sgt` compares two elements, and a
vector of keys compares 16 elements at once against the k-th best so far.

A float's key is its bits with the magnitude bits flipped when negative:
-NaN < -inf < -0 < +0 < inf < NaN, the order of ``compare TOTALORDER``
(what chlo.top_k's legalization sorts by). ``canonical`` keys first map -0
to +0 and every NaN to one +NaN, as jnp.sort's comparator does and as a
FLOAT compare treats zeros; ``smallest`` complements the key, so the k
largest keys are the k smallest elements and equal keys stay equal.
"""

from __future__ import annotations

from xlac.record import record

BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i8": 8, "i16": 16, "i32": 32, "i64": 64}

# The bits of the quiet NaN a canonical key stands every NaN for.
_CANONICAL_NAN = {"f16": 0x7E00, "bf16": 0x7FC0, "f32": 0x7FC00000, "f64": 0x7FF8000000000000}


@record
class TopKOrder:
    """Which k elements a top-k keeps first, and how it compares them."""

    smallest: bool = False       # the k smallest, smallest first (an ascending sort's head)
    canonical: bool = False      # -0 == +0, and all NaNs equal and above +inf


def supported(element: str) -> bool:
    return element in BITS


def key_type(element: str) -> str:
    return f"i{BITS[element]}"


def key_lines(element: str, value: str, order: TopKOrder, lanes: int = 0,
              prefix: str = "k") -> tuple[list[str], str]:
    """SSA lines computing the key of ``value`` (a scalar, or a vector of
    ``lanes`` elements), and the key's name. Names start with ``%<prefix>``."""
    keys, values = _types(element, lanes)
    lines: list[str] = []

    def add(name: str, rhs: str) -> str:
        lines.append(f"%{prefix}_{name} = {rhs}")
        return f"%{prefix}_{name}"

    def const(name: str, number, of_type: str) -> str:
        literal = f"dense<{number}>" if lanes else str(number)
        return add(name, f"arith.constant {literal} : {of_type}")

    key = value
    if element in _CANONICAL_NAN:                     # a float
        key = _ordered_bits(element, value, keys, values, add, const)
        if order.canonical:
            key = _canonical(element, value, key, keys, values, add, const)
    if order.smallest:
        key = add("small", f"arith.xori {key}, {const('ones', -1, keys)} : {keys}")
    return lines, key


def _types(element: str, lanes: int) -> tuple[str, str]:
    if not lanes:
        return key_type(element), element
    return f"vector<{lanes}x{key_type(element)}>", f"vector<{lanes}x{element}>"


def _ordered_bits(element, value, keys, values, add, const) -> str:
    """The float's bits, magnitude flipped when the sign is set."""
    bits = BITS[element]
    raw = add("bits", f"arith.bitcast {value} : {values} to {keys}")
    sign = add("sign", f"arith.shrsi {raw}, {const('high', bits - 1, keys)} : {keys}")
    flip = add("flip", f"arith.andi {sign}, {const('mag', (1 << (bits - 1)) - 1, keys)} : {keys}")
    return add("ord", f"arith.xori {raw}, {flip} : {keys}")


def _canonical(element, value, key, keys, values, add, const) -> str:
    """``key`` with -0 keyed as +0 (0) and every NaN as the quiet +NaN."""
    predicates = keys.replace(key_type(element), "i1")
    is_zero = add("iszero", f"arith.cmpf oeq, {value}, {const('fzero', '0.0', values)} : {values}")
    is_nan = add("isnan", f"arith.cmpf uno, {value}, {value} : {values}")
    zeroed = add("zeroed", f"arith.select {is_zero}, {const('zero', 0, keys)}, {key} : "
                           f"{predicates}, {keys}")
    nan = const("nan", _CANONICAL_NAN[element], keys)
    return add("canon", f"arith.select {is_nan}, {nan}, {zeroed} : {predicates}, {keys}")
