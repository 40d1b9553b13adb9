"""Random StableHLO programs for differential fuzzing (hypothesis strategies).

A program starts from one argument and applies a few ops, each to a value
made so far (and, where the op needs a second operand of a fitting shape,
a fresh argument). Every choice is a hypothesis draw, so a failing program
shrinks to a short one with small shapes and the first-listed ops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import strategies as st

FLOATS = ("f32", "f64", "f16", "bf16")
INTS = ("i32", "i8", "ui8")
DTYPES = FLOATS + INTS + ("i1",)

# hypothesis favours the first entries: the transcendental ones lead
FLOAT_UNARY = ("exponential", "log", "tanh", "sine", "cosine", "logistic",
               "exponential_minus_one", "log_plus_one", "cbrt", "rsqrt", "sqrt", "negate",
               "abs", "floor", "ceil", "round_nearest_even", "round_nearest_afz", "sign")
INT_UNARY = ("negate", "not", "popcnt", "count_leading_zeros", "abs", "sign")
FLOAT_BINARY = ("add", "power", "divide", "atan2", "remainder", "subtract", "multiply",
                "maximum", "minimum")
INT_BINARY = ("add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor",
              "shift_left", "shift_right_logical", "shift_right_arithmetic")
BOOL_BINARY = ("and", "or", "xor")
# Ops whose results are not correctly rounded: compared with a wider tolerance.
TRANSCENDENTAL = {"exponential", "log", "tanh", "rsqrt", "sine", "cosine", "logistic",
                  "exponential_minus_one", "log_plus_one", "cbrt", "power", "atan2"}
# Float -> int conversions are clamped first: out of range, the interpreter's
# result is undefined while XLA saturates.
_INT_RANGE = {"i32": (-6e4, 6e4), "i8": (-128, 127), "ui8": (0, 255)}

dims = st.integers(1, 4)
shapes = st.lists(dims, min_size=0, max_size=3).map(tuple)


@dataclass(frozen=True)
class Value:
    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.dtype)


class Program:
    """A @main under construction: its arguments and its op lines.

    (A plain class: hypothesis prints a failing one by ``__repr__``, its text.)
    """

    def __init__(self):
        self.args: list[Value] = []
        self.lines: list[str] = []
        self.values: list[Value] = []
        self.used: set[str] = set()
        self.transcendental = False

    def arg(self, shape, dtype) -> Value:
        value = Value(f"%arg{len(self.args)}", tuple(shape), dtype)
        self.args.append(value)
        self.values.append(value)
        return value

    def emit(self, op_text: str, shape, dtype) -> Value:
        self.used.update(re.findall(r"%\w+", op_text))
        value = Value(f"%v{len(self.lines)}", tuple(shape), dtype)
        self.lines.append(f"  {value.name} = {op_text}")
        self.values.append(value)
        return value

    def constant(self, literal: str, dtype: str) -> Value:
        return self.emit(f"stablehlo.constant dense<{literal}> : tensor<{dtype}>", (), dtype)

    def __repr__(self) -> str:   # how hypothesis shows a failing example
        return "Program(\"\"\"\n" + self.text() + "\"\"\")"

    @property
    def results(self) -> list[Value]:
        """Every value nothing uses (so no op is dead), or the argument."""
        made = self.values[len(self.args):] if self.lines else self.values
        return [v for v in made if v.name not in self.used] or self.values[-1:]

    def text(self) -> str:
        params = ", ".join(f"{a.name}: {a.type}" for a in self.args)
        types = ", ".join(v.type for v in self.results)
        names = ", ".join(v.name for v in self.results)
        body = "\n".join(self.lines)
        return (f"func.func @main({params}) -> ({types}) {{\n{body}\n"
                f"  return {names} : {types}\n}}\n")


def tensor_type(shape, dtype: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def _operand_like(draw, program: Program, shape, dtype) -> Value:
    """An existing value of this shape and type, or a new argument."""
    fits = [v for v in program.values if v.shape == tuple(shape) and v.dtype == dtype]
    return draw(st.sampled_from(fits + [None])) or program.arg(shape, dtype)


def unary(draw, program: Program, value: Value) -> Value | None:
    if value.dtype == "i1":
        ops = ("not",)
    else:
        ops = FLOAT_UNARY if value.dtype in FLOATS else INT_UNARY
    if value.dtype == "ui8":
        ops = tuple(op for op in ops if op not in ("abs", "sign"))
    op = draw(st.sampled_from(ops))
    program.transcendental |= op in TRANSCENDENTAL
    return program.emit(f"stablehlo.{op} {value.name} : {value.type}", value.shape, value.dtype)


def binary(draw, program: Program, value: Value) -> Value | None:
    ops = BOOL_BINARY if value.dtype == "i1" else \
        FLOAT_BINARY if value.dtype in FLOATS else INT_BINARY
    op = draw(st.sampled_from(ops))
    program.transcendental |= op in TRANSCENDENTAL
    other = _operand_like(draw, program, value.shape, value.dtype)
    return program.emit(f"stablehlo.{op} {value.name}, {other.name} : {value.type}",
                        value.shape, value.dtype)


def compare(draw, program: Program, value: Value) -> Value | None:
    direction = draw(st.sampled_from(("LT", "EQ", "NE", "LE", "GT", "GE")))
    kind = "FLOAT" if value.dtype in FLOATS else \
        "UNSIGNED" if value.dtype in ("ui8", "i1") else "SIGNED"
    other = _operand_like(draw, program, value.shape, value.dtype)
    return program.emit(f"stablehlo.compare {direction}, {value.name}, {other.name}, {kind} : "
                        f"({value.type}, {value.type}) -> {tensor_type(value.shape, 'i1')}",
                        value.shape, "i1")


def select(draw, program: Program, value: Value) -> Value | None:
    pred = _operand_like(draw, program, value.shape, "i1")
    other = _operand_like(draw, program, value.shape, value.dtype)
    return program.emit(f"stablehlo.select {pred.name}, {value.name}, {other.name} : "
                        f"({pred.type}, {value.type}, {value.type}) -> {value.type}",
                        value.shape, value.dtype)


def broadcast(draw, program: Program, value: Value) -> Value | None:
    rank = draw(st.integers(len(value.shape), 3))
    positions = sorted(draw(st.permutations(range(rank)))[:len(value.shape)])
    shape = [draw(dims) for _ in range(rank)]
    for source, position in zip(value.shape, positions):
        shape[position] = source if source != 1 else draw(dims)   # size 1 may expand
    result = tensor_type(shape, value.dtype)
    return program.emit(f"stablehlo.broadcast_in_dim {value.name}, dims = {positions} : "
                        f"({value.type}) -> {result}", shape, value.dtype)


def _reductions(dtype: str) -> list[tuple[str, str]]:
    """(op, init literal) of the reductions this element type allows."""
    if dtype == "i1":
        return [("or", "false"), ("and", "true")]
    lowest = {"f32": "0xFF800000", "f64": "0xFFF0000000000000", "f16": "0xFC00",
              "bf16": "0xFF80", "i32": "-2147483648", "i8": "-128", "ui8": "0"}[dtype]
    return [("add", "0.0" if dtype in FLOATS else "0"), ("maximum", lowest)]


def reduce(draw, program: Program, value: Value) -> Value | None:
    if not value.shape:
        return None
    op, init = draw(st.sampled_from(_reductions(value.dtype)))
    axes = sorted(draw(st.sets(st.integers(0, len(value.shape) - 1), min_size=1)))
    shape = [d for i, d in enumerate(value.shape) if i not in axes]
    start = program.constant(init, value.dtype)
    return program.emit(f"stablehlo.reduce({value.name} init: {start.name}) applies "
                        f"stablehlo.{op} across dimensions = {axes} : "
                        f"({value.type}, {start.type}) -> {tensor_type(shape, value.dtype)}",
                        shape, value.dtype)


def dot(draw, program: Program, value: Value) -> Value | None:
    if value.dtype == "i1" or not value.shape:
        return None
    rank = len(value.shape)
    batch = [0] if rank == 3 else []
    contract = rank - 1
    columns = [draw(dims)] if rank >= 2 else []
    other_shape = value.shape[:1] * len(batch) + (value.shape[-1],) + tuple(columns)
    other = _operand_like(draw, program, other_shape, value.dtype)
    shape = value.shape[:-1] + tuple(columns)
    batching = f"batching_dims = {batch} x {batch}, " if batch else ""
    return program.emit(f"stablehlo.dot_general {value.name}, {other.name}, {batching}"
                        f"contracting_dims = [{contract}] x [{len(batch)}] : "
                        f"({value.type}, {other.type}) -> {tensor_type(shape, value.dtype)}",
                        shape, value.dtype)


def slice_(draw, program: Program, value: Value) -> Value | None:
    if not value.shape:
        return None
    bounds, shape = [], []
    for size in value.shape:
        start = draw(st.integers(0, size - 1))
        limit = draw(st.integers(start + 1, size))
        stride = draw(st.integers(1, 2))
        bounds.append(f"{start}:{limit}:{stride}")
        shape.append(-(-(limit - start) // stride))
    return program.emit(f"stablehlo.slice {value.name} [{', '.join(bounds)}] : "
                        f"({value.type}) -> {tensor_type(shape, value.dtype)}",
                        shape, value.dtype)


def concatenate(draw, program: Program, value: Value) -> Value | None:
    if not value.shape:
        return None
    axis = draw(st.integers(0, len(value.shape) - 1))
    other_shape = list(value.shape)
    other_shape[axis] = draw(dims)
    other = _operand_like(draw, program, other_shape, value.dtype)
    shape = list(value.shape)
    shape[axis] += other_shape[axis]
    return program.emit(f"stablehlo.concatenate {value.name}, {other.name}, dim = {axis} : "
                        f"({value.type}, {other.type}) -> {tensor_type(shape, value.dtype)}",
                        shape, value.dtype)


def transpose(draw, program: Program, value: Value) -> Value | None:
    if len(value.shape) < 2:
        return None
    order = list(draw(st.permutations(range(len(value.shape)))))
    shape = [value.shape[i] for i in order]
    return program.emit(f"stablehlo.transpose {value.name}, dims = {order} : "
                        f"({value.type}) -> {tensor_type(shape, value.dtype)}",
                        shape, value.dtype)


def convert(draw, program: Program, value: Value) -> Value | None:
    target = draw(st.sampled_from(DTYPES))
    if value.dtype in FLOATS and target in INTS + ("i1",):
        value = _clamped(program, value, target)
    return program.emit(f"stablehlo.convert {value.name} : "
                        f"({value.type}) -> {tensor_type(value.shape, target)}",
                        value.shape, target)


def _clamped(program: Program, value: Value, target: str) -> Value:
    """``value`` with NaN -> 0 and clamped to ``target``'s range."""
    low, high = _INT_RANGE.get(target, (0, 1))
    zero = program.constant("0.0", value.dtype)
    low_v, high_v = program.constant(f"{low:.1f}", value.dtype), program.constant(
        f"{high:.1f}", value.dtype)
    bool_type = tensor_type(value.shape, "i1")
    nan = program.emit(f"stablehlo.compare NE, {value.name}, {value.name}, FLOAT : "
                       f"({value.type}, {value.type}) -> {bool_type}", value.shape, "i1")
    clamped = program.emit(f"stablehlo.clamp {low_v.name}, {value.name}, {high_v.name} : "
                           f"({low_v.type}, {value.type}, {high_v.type}) -> {value.type}",
                           value.shape, value.dtype)
    zeros = program.emit(f"stablehlo.broadcast_in_dim {zero.name}, dims = [] : "
                         f"({zero.type}) -> {value.type}", value.shape, value.dtype)
    return program.emit(f"stablehlo.select {nan.name}, {zeros.name}, {clamped.name} : "
                        f"({bool_type}, {value.type}, {value.type}) -> {value.type}",
                        value.shape, value.dtype)


OPS = (unary, binary, broadcast, reduce, dot, slice_, concatenate, select, convert,
       compare, transpose)


@st.composite
def programs(draw, max_ops: int = 6) -> Program:
    """A random well-typed @main returning every value it makes that nothing uses."""
    program = Program()
    program.arg(draw(shapes), draw(st.sampled_from(DTYPES)))
    wanted, tries = draw(st.integers(1, max_ops)), 0
    while len(program.lines) < wanted and tries < 2 * max_ops:   # an op may not apply
        tries += 1
        op = draw(st.sampled_from(OPS))
        op(draw, program, draw(st.sampled_from(program.values[::-1])))
    return program
