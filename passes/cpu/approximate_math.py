"""xla-approximate-math: f32 exp and tanh as polynomials, so they vectorize."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.helper_calls import call_instead

# Coefficients fitted here (numpy least squares in float64 on 4001 Chebyshev
# nodes, weighted for relative error); max relative error ~4e-9, far below
# f32's 6e-8, so the f32 rounding of each step dominates (<= 2 ulp overall).
# exp(r) = 1 + r + r^2 * P(r) on [-ln2/2, ln2/2]
_EXP_P = (0.49999988592958855, 0.1666651843720967, 0.04166953339547885,
          0.008368919080969766, 0.0013751408181080288)
# tanh(x) = x + x^3 * Q(x^2) on [0, 0.625]
_TANH_Q = (-0.33333330657349786, 0.13333201332790984, -0.05394625145441634,
           0.021698201659365222, -0.008171768758937333, 0.0021382075013689837)
_TANH_SMALL = 0.625     # below: the odd polynomial; above: 1 - 2/(exp(2|x|)+1)
_TANH_SATURATE = 10.0   # 2/(exp(20)+1) is below half an ulp of 1.0f

_SUPPORTED = ("math.exp", "math.tanh")


@dataclass(frozen=True)
class ApproximateMath(ModulePass):
    """Replace f32 `math.exp` / `math.tanh` (scalar or vector) by arith polynomials.

    Why: LLVM lowers `llvm.exp` on a vector to one `expf` call per lane and
    `math.tanh` goes to libm's `tanhf`, so a 16-lane loop makes 16 calls.
    Upstream's polynomial approximation is not exposed as a pass in our
    bindings; this one is written out here. exp: range reduction
    x = k*ln2 + r, a degree-6 polynomial, 2^k in two exponent halves (so
    results down to the smallest subnormal are right); tanh: an odd
    polynomial below 0.625, 1 - 2/(exp(2|x|)+1) above. NaN and +-inf
    propagate as libm's do.

    Example:
        %y = math.exp %x : vector<16xf32>
    becomes
        %y = call @xla_exp_v16f32(%x) : (vector<16xf32>) -> vector<16xf32>
    and the `inline` pass that follows puts the polynomial in place.
    """

    name = "xla-approximate-math"

    def run(self, module: ir.Operation) -> None:
        targets = [op for op in nested_ops(module)
                   if op.name in _SUPPORTED and _is_f32(op.results[0].type)]
        helpers: dict[tuple[str, str], str] = {}
        for op in targets:
            key = (op.name, str(op.results[0].type))
            if key not in helpers:
                helpers[key] = _add_helper(module, *key)
            call_instead(op, helpers[key])
            op.erase()


def _is_f32(type_: ir.Type) -> bool:
    text = str(type_)     # tensors are left alone: this runs on vectors and scalars
    return text == "f32" or (text.startswith("vector<") and text.endswith("xf32>"))


def _add_helper(module: ir.Operation, op_name: str, type_text: str) -> str:
    suffix = type_text.replace("vector<", "v").replace(">", "").replace("x", "")
    name = f"xla_{op_name.split('.')[1]}_{suffix}"
    body = _Emitter(type_text)
    result = body.exp(body.arg) if op_name == "math.exp" else body.tanh(body.arg)
    text = (f"func.func private @{name}(%x: {type_text}) -> {type_text} {{\n"
            + "".join(body.lines) + f"  return {result} : {type_text}\n}}\n")
    with module.context, module.location:
        parsed = ir.Module.parse(text)
    for function in list(parsed.body.operations):
        module.regions[0].blocks[0].append(function.operation)
    return name


class _Emitter:
    """Writes SSA lines for one helper; scalar and vector types alike."""

    def __init__(self, type_text: str):
        self.float = type_text
        self.int = type_text.replace("f32", "i32")
        self.bool = type_text.replace("f32", "i1")
        self.vector = type_text.startswith("vector<")
        self.lines: list[str] = []
        self.arg = "%x"
        self._count = 0

    def _emit(self, rhs: str) -> str:
        name = f"%v{self._count}"
        self._count += 1
        self.lines.append(f"  {name} = {rhs}\n")
        return name

    def const(self, value: float, integer: bool = False) -> str:
        type_ = self.int if integer else self.float
        literal = str(int(value)) if integer else repr(float(value))
        if self.vector:
            return self._emit(f"arith.constant dense<{literal}> : {type_}")
        return self._emit(f"arith.constant {literal} : {type_}")

    def op(self, name: str, *args: str, type_: str | None = None) -> str:
        return self._emit(f"{name} {', '.join(args)} : {type_ or self.float}")

    def poly(self, x: str, coefficients: tuple[float, ...]) -> str:
        """Horner: c0 + x*(c1 + x*(...)) with fused multiply-adds."""
        acc = self.const(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.op("math.fma", acc, x, self.const(c))
        return acc

    def exp(self, x: str) -> str:
        clamped = self.op("arith.minimumf", self.op("arith.maximumf", x, self.const(-104.0)),
                          self.const(88.75))
        k = self.op("math.roundeven", self.op("arith.mulf", clamped, self.const(1.4426950408889634)))
        r = self.op("math.fma", k, self.const(-0.693145751953125), clamped)      # ln2 high bits
        r = self.op("math.fma", k, self.const(-1.4286068203094173e-06), r)       # ln2 - high
        p = self.op("math.fma", self.op("arith.mulf", r, r), self.poly(r, _EXP_P),
                    self.op("arith.addf", r, self.const(1.0)))
        ki = self._emit(f"arith.fptosi {k} : {self.float} to {self.int}")
        half = self.op("arith.shrsi", ki, self.const(1, True), type_=self.int)
        rest = self.op("arith.subi", ki, half, type_=self.int)
        scaled = self.op("arith.mulf", self.op("arith.mulf", p, self._pow2(half)), self._pow2(rest))
        nan = self._emit(f"arith.cmpf uno, {x}, {x} : {self.float}")
        return self._emit(f"arith.select {nan}, {x}, {scaled} : {self.bool}, {self.float}")

    def _pow2(self, k: str) -> str:
        """2^k for -126 <= k <= 127, built in the exponent field."""
        biased = self.op("arith.addi", k, self.const(127, True), type_=self.int)
        bits = self.op("arith.shli", biased, self.const(23, True), type_=self.int)
        return self._emit(f"arith.bitcast {bits} : {self.int} to {self.float}")

    def tanh(self, x: str) -> str:
        ax = self.op("math.absf", x)
        x2 = self.op("arith.mulf", x, x)
        small = self.op("math.fma", self.op("arith.mulf", x2, ax), self.poly(x2, _TANH_Q), ax)
        e = self.exp(self.op("arith.mulf", self.op("arith.minimumf", ax, self.const(_TANH_SATURATE)),
                             self.const(2.0)))
        one = self.const(1.0)
        t = self.op("arith.subf", one,
                    self.op("arith.divf", self.const(2.0), self.op("arith.addf", e, one)))
        is_small = self._emit(f"arith.cmpf olt, {ax}, {self.const(_TANH_SMALL)} : {self.float}")
        magnitude = self._emit(f"arith.select {is_small}, {small}, {t} : {self.bool}, {self.float}")
        return self.op("math.copysign", magnitude, x)     # odd: tanh(-0) is -0
