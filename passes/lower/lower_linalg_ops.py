"""xla-lower-linalg-ops: triangular_solve and cholesky as scf loops."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.helper_calls import delinearize, fresh_symbol, replace_with_call
from xlac.record import record

_FLOATS = ("f16", "bf16", "f32", "f64", "complex<f32>", "complex<f64>")


class LowerLinalgOps(ModulePass):
    """Lower `stablehlo.triangular_solve` and `stablehlo.cholesky` to scf loops.

    Why: upstream stablehlo-legalize-to-linalg lowers neither. Each becomes a
    private helper of substitution loops over tensors, one batch matrix at a
    time, called in place of the op and inlined by `inline`:

        %x = "stablehlo.triangular_solve"(%a, %b) {left_side, lower, ...}
      ->
        %x = call @xla_triangular_solve_0(%a, %b)   // scf.for substitution

    f16/bf16 are computed in f32 and rounded once per result element.
    Cholesky leaves zeros in the triangle it does not compute (as in the
    spec's example).
    """

    name = "xla-lower-linalg-ops"

    acts_on = frozenset({"stablehlo.triangular_solve", "stablehlo.cholesky"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.triangular_solve":
                name = fresh_symbol(module, "xla_triangular_solve")
                replace_with_call(module, op, _solve_text(op, name), name)
            elif op.name == "stablehlo.cholesky":
                name = fresh_symbol(module, "xla_cholesky")
                replace_with_call(module, op, _cholesky_text(op, name), name)


@record
class _Matrix:
    """Element (i, j) of the current batch matrix of ``tensor``: stored at
    [j, i] when ``swap``, conjugated when ``conj``; computed in f32 for
    f16/bf16. ``load``/``store`` return MLIR lines ending in ``dst``."""

    tensor: str
    type: ir.RankedTensorType
    swap: bool = False
    conj: bool = False

    @property
    def element(self) -> str:
        return str(self.type.element_type)

    @property
    def compute(self) -> str:
        return "f32" if self.element in ("f16", "bf16") else self.element

    def _index(self, i: str, j: str) -> str:
        batch = "".join(f"%bat{d}, " for d in range(self.type.rank - 2))
        return batch + (f"{j}, {i}" if self.swap else f"{i}, {j}")

    def _steps(self, widen: bool) -> list[str]:
        """Between stored and computed values (never both: complex is not widened)."""
        if self.conj and _is_complex(self.compute):
            return [f"complex.conj {{}} : {self.compute}"]
        if self.compute == self.element:
            return []
        return [f"arith.extf {{}} : {self.element} to {self.compute}" if widen
                else f"arith.truncf {{}} : {self.compute} to {self.element}"]

    def load(self, dst: str, i: str, j: str, tensor: str | None = None) -> str:
        first = f"tensor.extract {tensor or self.tensor}[{self._index(i, j)}] : {self.type}"
        return _chain(dst, [first] + self._steps(widen=True), None)

    def store(self, dst: str, value: str, tensor: str, i: str, j: str) -> str:
        last = f"tensor.insert {{}} into {tensor}[{self._index(i, j)}] : {self.type}"
        return _chain(dst, self._steps(widen=False) + [last], value)


def _chain(dst: str, steps: list[str], value: str | None) -> str:
    """Apply each step ('{}' = the previous value) in turn; the last is ``dst``."""
    lines = []
    for k, step in enumerate(steps):
        name = dst if k == len(steps) - 1 else f"{dst}_{k}"
        lines.append(f"{name} = {step.format(value) if value else step}")
        value = name
    return "\n".join(lines)


def _is_complex(type_text: str) -> bool:
    return type_text.startswith("complex")


def _conj_of(dst: str, value: str, type_text: str) -> tuple[str, str]:
    """(lines, name) of conj(value); the value itself for real types."""
    if not _is_complex(type_text):
        return "", value
    return f"{dst} = complex.conj {value} : {type_text}", dst


def _arith(kind: str, type_text: str) -> str:
    """The scalar op for ``kind`` (mul, sub, div) on real or complex values."""
    return f"complex.{kind}" if _is_complex(type_text) else f"arith.{kind}f"


def _check(op: ir.Operation, value: ir.Value) -> ir.RankedTensorType:
    tensor = ir.RankedTensorType(value.type)
    if not tensor.has_static_shape or tensor.rank < 2:
        raise PassFailure(op.location, f"'{op.name}' needs static shapes of rank >= 2, "
                                       f"got {tensor}; run stablehlo-refine-shapes first")
    if str(tensor.element_type) not in _FLOATS:
        raise PassFailure(op.location, f"'{op.name}' supports {', '.join(_FLOATS)}, "
                                       f"not {tensor.element_type}")
    return tensor


def _flag(op: ir.Operation, name: str) -> bool:
    return name in op.attributes and ir.BoolAttr(op.attributes[name]).value


def _solve_text(op: ir.Operation, name: str) -> str:
    """op(a) x = b (left side) or x op(a) = b, solved as N y = c by substitution.

    The right side is the transposed system N = op(a)^T, y = x^T. N is read
    from a with indices swapped when exactly one of "transpose" and "right
    side" applies; N is lower triangular (solved top-down) when exactly one
    of "lower" and "swapped" holds.
    """
    a_type, b_type = _check(op, op.operands[0]), _check(op, op.operands[1])
    left = _flag(op, "left_side")
    transpose = str(op.attributes["transpose_a"]).split()[-1].rstrip(">")
    swap = (transpose != "NO_TRANSPOSE") == left
    forward = _flag(op, "lower") != swap
    a = _Matrix("%a", a_type, swap, transpose == "ADJOINT")
    x = _Matrix("%xk", b_type, swap=not left)
    ctype = a.compute
    n, m = a_type.shape[-1], b_type.shape[-1 if left else -2]
    row = "%i = arith.addi %step, %c0 : index" if forward else \
        "%i = arith.subi %last, %step : index"
    solved = "%c0 to %i" if forward else "%i1 to %n"
    divide, value = "", "%acc"
    if not _flag(op, "unit_diagonal"):
        divide = a.load("%nii", "%i", "%i") + f"\n%val = {_arith('div', ctype)} %acc, %nii : {ctype}"
        value = "%val"
    body = f"""
    %x_b = scf.for %step = %c0 to %n step %c1 iter_args(%xs = %x) -> ({b_type}) {{
      {row}
      %i1 = arith.addi %i, %c1 : index
      %x_i = scf.for %k = %c0 to %m step %c1 iter_args(%xk = %xs) -> ({b_type}) {{
        {x.load("%rhs", "%i", "%k")}
        %acc = scf.for %j = {solved} step %c1 iter_args(%s = %rhs) -> ({ctype}) {{
          {a.load("%nij", "%i", "%j")}
          {x.load("%yj", "%j", "%k")}
          %p = {_arith('mul', ctype)} %nij, %yj : {ctype}
          %s2 = {_arith('sub', ctype)} %s, %p : {ctype}
          scf.yield %s2 : {ctype}
        }}
        {divide}
        {x.store("%xk2", value, "%xk", "%i", "%k")}
        scf.yield %xk2 : {b_type}
      }}
      scf.yield %x_i : {b_type}
    }}"""
    return _batched(name, [("%a", a_type), ("%b", b_type)], b_type, "%b",
                    {"%n": n, "%m": m, "%last": n - 1}, body)


def _cholesky_text(op: ir.Operation, name: str) -> str:
    """Column by column: L[j][j] = sqrt(a[j][j] - sum |L[j][k]|^2), then
    L[i][j] = (a[i][j] - sum L[i][k] conj(L[j][k])) / L[j][j] below it.

    ``lower = false`` computes U = L^H from the upper triangle: it reads a
    transposed and conjugated, and writes L the same way.
    """
    a_type = _check(op, op.operands[0])
    upper = not _flag(op, "lower")
    a = _Matrix("%a", a_type, swap=upper, conj=upper)
    ell = _Matrix("%li", a_type, swap=upper, conj=upper)
    ctype = a.compute
    mul, sub = _arith("mul", ctype), _arith("sub", ctype)
    conj_d, ljk_d = _conj_of("%ljk_c", "%ljk", ctype)
    conj_o, ljk_o = _conj_of("%ljo_c", "%ljo", ctype)
    body = f"""
    %x_b = scf.for %j = %c0 to %n step %c1 iter_args(%lj = %x) -> ({a_type}) {{
      %j1 = arith.addi %j, %c1 : index
      {a.load("%ajj", "%j", "%j")}
      %d = scf.for %k = %c0 to %j step %c1 iter_args(%s = %ajj) -> ({ctype}) {{
        {ell.load("%ljk", "%j", "%k", "%lj")}
        {conj_d}
        %sq = {mul} %ljk, {ljk_d} : {ctype}
        %s2 = {sub} %s, %sq : {ctype}
        scf.yield %s2 : {ctype}
      }}
      {_sqrt("%ljj", "%d", ctype)}
      {ell.store("%l_diag", "%ljj", "%lj", "%j", "%j")}
      %l_col = scf.for %i = %j1 to %n step %c1 iter_args(%li = %l_diag) -> ({a_type}) {{
        {a.load("%aij", "%i", "%j")}
        %t = scf.for %k = %c0 to %j step %c1 iter_args(%s = %aij) -> ({ctype}) {{
          {ell.load("%lik", "%i", "%k")}
          {ell.load("%ljo", "%j", "%k")}
          {conj_o}
          %p = {mul} %lik, {ljk_o} : {ctype}
          %s2 = {sub} %s, %p : {ctype}
          scf.yield %s2 : {ctype}
        }}
        %lij = {_arith('div', ctype)} %t, %ljj : {ctype}
        {ell.store("%li2", "%lij", "%li", "%i", "%j")}
        scf.yield %li2 : {a_type}
      }}
      scf.yield %l_col : {a_type}
    }}"""
    zeros = f"{_zero('%zero', str(a_type.element_type))}\n  %zeros = tensor.splat %zero : {a_type}"
    return _batched(name, [("%a", a_type)], a_type, "%zeros",
                    {"%n": a_type.shape[-1]}, body, zeros)


def _sqrt(dst: str, value: str, type_text: str) -> str:
    """The square root of a real number (held in a complex one for complex types)."""
    if not _is_complex(type_text):
        return f"{dst} = math.sqrt {value} : {type_text}"
    part = type_text[len("complex<"):-1]
    return (f"{dst}_re = complex.re {value} : {type_text}\n"
            f"{dst}_sqrt = math.sqrt {dst}_re : {part}\n"
            f"{dst}_zero = arith.constant 0.0 : {part}\n"
            f"{dst} = complex.create {dst}_sqrt, {dst}_zero : {type_text}")


def _zero(dst: str, type_text: str) -> str:
    if _is_complex(type_text):
        part = type_text[len("complex<"):-1]
        return f"{dst} = complex.constant [0.0 : {part}, 0.0 : {part}] : {type_text}"
    return f"{dst} = arith.constant 0.0 : {type_text}"


def _batched(name: str, params: list[tuple[str, ir.RankedTensorType]],
             result: ir.RankedTensorType, init: str, constants: dict[str, int],
             body: str, prelude: str = "") -> str:
    """A helper function that runs ``body`` (yielding ``%x_b`` from ``%x``) once
    per batch matrix, with %bat0, %bat1, ... that matrix's batch indices."""
    batch = list(result.shape[:-2])
    args = ", ".join(f"{p}: {t}" for p, t in params)
    consts = "\n  ".join(f"{k} = arith.constant {v} : index" for k, v in constants.items())
    return f"""
func.func private @{name}({args}) -> {result} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %batches = arith.constant {math.prod(batch)} : index
  {consts}
  {prelude}
  %result = scf.for %flat = %c0 to %batches step %c1 iter_args(%x = {init}) -> ({result}) {{
    {delinearize("%flat", batch, "bat")}
    {body}
    scf.yield %x_b : {result}
  }}
  return %result : {result}
}}
"""
