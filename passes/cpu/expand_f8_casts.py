"""xla-expand-f8-casts: f8 <-> f32 conversions as integer code."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops, symbol_name
from xlac.passes.helper_calls import call_and_erase
from xlac.record import record


@record
class _Format:
    exponent: int
    mantissa: int
    bias: int
    nans: str       # "ieee" (all-ones exponent: inf, NaN), "fn" (S.1111.111 NaN), "fnuz" (0x80 NaN)

    @property
    def width(self) -> int:
        return 1 + self.exponent + self.mantissa


FORMATS = {
    "f8E5M2": _Format(5, 2, 15, "ieee"), "f8E4M3": _Format(4, 3, 7, "ieee"),
    "f8E3M4": _Format(3, 4, 3, "ieee"), "f8E4M3FN": _Format(4, 3, 7, "fn"),
    "f8E4M3FNUZ": _Format(4, 3, 8, "fnuz"), "f8E5M2FNUZ": _Format(5, 2, 16, "fnuz"),
    "f8E4M3B11FNUZ": _Format(4, 3, 11, "fnuz"),
}
F16 = _Format(5, 10, 15, "ieee")    # with option f16: CPUs without F16C, where LLVM calls __truncsfhf2


@record
class ExpandF8Casts(ModulePass):
    """Replace each `arith.extf` from and `arith.truncf` to an f8 type (scalar
    or vector) by a call of a helper doing it on the bits in i32.

    Why: LLVM has no f8 types; convert-arith-to-llvm leaves these casts
    unconverted, so every f8 program failed in translation. With f8
    arithmetic and math emulated in f32 first (arith-emulate-unsupported-
    floats, math-extend-to-supported-types), these casts are all that is
    left. Rounding is to nearest even, as the interpreter's APFloat; a
    value past the largest finite one becomes inf where the format has it
    and NaN where it does not (fn/fnuz), as ml_dtypes. f64 sources are
    rounded to f32 first (a double rounding only for f64 values within
    2^-29 of an f8 tie).

        %y = arith.truncf %x : f32 to f8E4M3FN
      ->
        %y = call @xla_truncf_f8E4M3FN(%x) : (f32) -> f8E4M3FN
    """

    name = "xla-expand-f8-casts"

    acts_on = frozenset({"arith.extf", "arith.truncf"})
    f16: bool = False           # also f16, for a CPU without F16C (the JIT has no __truncsfhf2)

    def run(self, module: ir.Operation) -> None:
        formats = {**FORMATS, "f16": F16} if self.f16 else FORMATS
        helpers: dict[str, str] = {}
        for op in module_ops(module):
            if op.name not in ("arith.extf", "arith.truncf"):
                continue
            source, result = str(op.operands[0].type), str(op.results[0].type)
            narrow = result if op.name == "arith.truncf" else source
            if _element(narrow) not in formats:
                continue
            key = f"{op.name}:{source}:{result}"
            if key not in helpers:
                helpers[key] = _add_helper(module, op.name, source, result, formats)
            call_and_erase(op, helpers[key])


def _element(type_: str) -> str:
    return type_.rsplit("x", 1)[-1].rstrip(">") if type_.startswith("vector<") else type_


def _shaped(type_: str, element: str) -> str:
    """``element`` in the vector shape of ``type_`` (or scalar)."""
    return f"{type_.rsplit('x', 1)[0]}x{element}>" if type_.startswith("vector<") else element


class _Body:
    """Lines of a helper over values of one (vector) shape."""

    def __init__(self, like: str):
        self.like, self.lines, self.count = like, [], 0

    def type(self, element: str) -> str:
        return _shaped(self.like, element)

    def const(self, value, element: str = "i32") -> str:
        self.count += 1
        name = f"%v{self.count}"
        attr = f"dense<{value}> : {self.type(element)}" if self.like.startswith("vector<") \
            else f"{value} : {element}"
        self.lines.append(f"  {name} = arith.constant {attr}")
        return name

    def raw(self, text: str) -> str:
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"  {name} = {text}")
        return name

    def binary(self, op: str, a: str, b, element: str = "i32") -> str:
        b = b if isinstance(b, str) else self.const(b, element)
        return self.raw(f"arith.{op} {a}, {b} : {self.type(element)}")

    def cast(self, op: str, a: str, source: str, result: str) -> str:
        return self.raw(f"arith.{op} {a} : {self.type(source)} to {self.type(result)}")

    def cmp(self, predicate: str, a: str, b) -> str:
        b = b if isinstance(b, str) else self.const(b)
        return self.raw(f"arith.cmpi {predicate}, {a}, {b} : {self.type('i32')}")

    def select(self, condition: str, a, b) -> str:
        a = a if isinstance(a, str) else self.const(a)
        b = b if isinstance(b, str) else self.const(b)
        return self.raw(f"arith.select {condition}, {a}, {b} : {self.type('i1')}, "
                        f"{self.type('i32')}")


def _extend(body: _Body, x: str, fmt: _Format, narrow: str) -> str:
    """f32 value of ``x``, of the narrow float type ``narrow``."""
    storage = f"i{fmt.width}"
    bits = body.cast("extui", body.cast("bitcast", x, narrow, storage), storage, "i32")
    sign = body.binary("shli", body.binary("andi", bits, 1 << (fmt.width - 1)), 32 - fmt.width)
    exponent = body.binary("andi", body.binary("shrui", bits, fmt.mantissa),
                           (1 << fmt.exponent) - 1)
    mantissa = body.binary("andi", bits, (1 << fmt.mantissa) - 1)
    normal = body.binary("ori", body.binary("shli", body.binary("addi", exponent, 127 - fmt.bias),
                                            23),
                         body.binary("shli", mantissa, 23 - fmt.mantissa))
    scaled = body.binary("mulf", body.cast("uitofp", mantissa, "i32", "f32"),
                         _float(2.0 ** (1 - fmt.bias - fmt.mantissa)), "f32")
    subnormal = body.cast("bitcast", scaled, "f32", "i32")
    magnitude = body.select(body.cmp("eq", exponent, 0), subnormal, normal)
    nan, top = 0x7FC00000, (1 << fmt.exponent) - 1
    if fmt.nans == "ieee":
        special = body.select(body.cmp("eq", mantissa, 0), 0x7F800000, nan)
        magnitude = body.select(body.cmp("eq", exponent, top), special, magnitude)
    elif fmt.nans == "fn":
        magnitude = body.select(body.cmp("eq", body.binary("andi", bits, 0x7F), 0x7F), nan,
                                magnitude)
    else:
        magnitude = body.select(body.cmp("eq", bits, 0x80), nan, magnitude)
    return body.cast("bitcast", body.binary("ori", magnitude, sign), "i32", "f32")


def _truncate(body: _Body, x: str, fmt: _Format, narrow: str) -> str:
    """``narrow`` value of f32 ``x``, rounded to nearest even."""
    bits = body.cast("bitcast", x, "f32", "i32")
    sign = body.binary("shrui", body.binary("andi", bits, -(1 << 31)), 32 - fmt.width)
    magnitude = body.binary("andi", bits, 0x7FFFFFFF)
    shift = 23 - fmt.mantissa
    odd = body.binary("andi", body.binary("shrui", magnitude, shift), 1)
    rounded = body.binary("addi", magnitude, body.binary("addi", odd, (1 << (shift - 1)) - 1))
    normal = body.binary("subi", body.binary("shrui", rounded, shift),
                         (127 - fmt.bias) << fmt.mantissa)
    # below the smallest normal: |x| * 2^(bias-1+mantissa) rounded to an integer by adding 2^23
    scaled = body.binary("mulf", body.cast("bitcast", magnitude, "i32", "f32"),
                         _float(2.0 ** (fmt.bias - 1 + fmt.mantissa)), "f32")
    shifted = body.binary("addf", scaled, _float(2.0 ** 23), "f32")
    subnormal = body.binary("subi", body.cast("bitcast", shifted, "f32", "i32"), 0x4B000000)
    tiny = body.cmp("ult", magnitude, (128 - fmt.bias) << 23)
    result = body.select(tiny, subnormal, normal)
    is_nan = body.cmp("ugt", magnitude, 0x7F800000)
    top = (1 << fmt.exponent) - 1
    if fmt.nans == "ieee":
        inf = top << fmt.mantissa
        result = body.select(body.cmp("sge", result, inf), inf, result)
        result = body.select(is_nan, inf | (1 << (fmt.mantissa - 1)), result)
        result = body.binary("ori", result, sign)
    elif fmt.nans == "fn":
        over = body.binary("ori", body.cmp("sgt", result, 0x7E), is_nan, "i1")
        result = body.binary("ori", body.select(over, 0x7F, result), sign)
    else:
        over = body.binary("ori", body.cmp("sgt", result, 0x7F), is_nan, "i1")
        signed = body.select(body.cmp("eq", result, 0), result, body.binary("ori", result, sign))
        result = body.select(over, 0x80, signed)
    storage = f"i{fmt.width}"
    return body.cast("bitcast", body.cast("trunci", result, "i32", storage), storage, narrow)


def _float(value: float) -> float:
    return float(value)


def _add_helper(module: ir.Operation, op_name: str, source: str, result: str,
                formats: dict[str, _Format]) -> str:
    name = (f"xla_{op_name.split('.')[1]}_{source}_{result}".replace("vector<", "v")
            .replace(">", "").replace("<", ""))
    body = _Body(source)
    if op_name == "arith.extf":
        fmt = formats[_element(source)]
        value = _extend(body, "%x", fmt, _element(source))
        wide = _element(result)
        if wide == "f64":
            value = body.cast("extf", value, "f32", "f64")
        elif wide != "f32":
            value = body.cast("truncf", value, "f32", wide)   # exact: f8 values fit f16/bf16
    else:
        fmt = formats[_element(result)]
        value, wide = "%x", _element(source)
        if wide == "f64":
            value = body.cast("truncf", value, "f64", "f32")
        elif wide != "f32":
            value = body.cast("extf", value, wide, "f32")
        value = _truncate(body, value, fmt, _element(result))
    text = (f"func.func private @{name}(%x: {source}) -> {result} {{\n" + "\n".join(body.lines)
            + f"\n  return {value} : {result}\n}}\n")
    helper = ir.Module.parse(text, context=module.context)
    target = module.regions[0].blocks[0]
    taken = {symbol_name(op.operation) for op in target.operations
             if "sym_name" in op.operation.attributes}
    if name not in taken:
        list(helper.body.operations)[0].operation.move_before(
            list(target.operations)[0].operation)
    return name
