"""xla-lower-select-and-scatter: stablehlo.select_and_scatter as scf loops."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.helper_calls import delinearize, fresh_symbol, region_declaration, replace_with_call
from xlac.passes.lower import select_and_scatter_windows
from xlac.record import record


@record
class LowerSelectAndScatter(ModulePass):
    """Lower `stablehlo.select_and_scatter` to scf loops over tensors.

    Why: upstream stablehlo-legalize-to-linalg has no lowering for it (it is
    the gradient of max-pooling). For each source element, a loop over its
    operand window picks one element with the `select` region, XLA's way:
    padding is never picked, the first in-bounds element starts, and a later
    one replaces it when `select(current, later)` is false. The source value
    is then combined into the output (filled with init_value) by `scatter`.
    The op becomes a call to a private helper that `inline` folds back in:

        %r = "stablehlo.select_and_scatter"(%op, %src, %init) ({ge}, {add})
      ->
        %r = call @xla_select_and_scatter(%op, %src, %init)   // scf.for nest

    Option `windows` (the CPU pipeline's): where the regions are elementwise
    StableHLO and the window has at most 64 positions, elementwise StableHLO
    over the window positions instead (select_and_scatter_windows.py): the
    same values bit for bit, in vector loops; jax's max-pool gradient of
    80 x 80 x 40 (2x2/2) 14 -> 0.12 ms. NCHW (the minor dim strided) is
    vectorized along the output's minor [q, r] rows (minor_dim_plan).
    """

    name = "xla-lower-select-and-scatter"
    windows: bool = False

    acts_on = frozenset({"stablehlo.select_and_scatter"})

    def run(self, module: ir.Operation) -> None:
        for op in [o for o in module_ops(module) if o.name == "stablehlo.select_and_scatter"]:
            if self.windows and _takes_windows(op):
                with op.location:
                    value = select_and_scatter_windows.lower(op, _Window.of(op))
                op.results[0].replace_all_uses_with(value)
                op.erase()
                continue
            prefix = fresh_symbol(module, "xla_select_and_scatter")
            select, scatter = f"{prefix}_select", f"{prefix}_scatter"
            text = (region_declaration(op.regions[0], select)
                    + region_declaration(op.regions[1], scatter)
                    + _helper_text(_Window.of(op), prefix, select, scatter))
            replace_with_call(module, op, text, prefix,
                              {select: op.regions[0], scatter: op.regions[1]})


@record
class _Window:
    operand: ir.RankedTensorType
    source: ir.RankedTensorType
    sizes: list[int]
    strides: list[int]
    pad_low: list[int]
    pad_high: list[int]

    @staticmethod
    def of(op: ir.Operation) -> _Window:
        operand, source = (ir.RankedTensorType(v.type) for v in op.operands[:2])
        if not (operand.has_static_shape and source.has_static_shape):
            raise PassFailure(op.location, "select_and_scatter: dynamic shapes are not "
                                           "supported; run stablehlo-refine-shapes first")
        rank = operand.rank
        sizes = _ints(op, "window_dimensions", [1] * rank)
        strides = _ints(op, "window_strides", [1] * rank)
        padding = _ints(op, "padding", [0] * (2 * rank))
        if len(sizes) != rank or len(strides) != rank:
            raise PassFailure(op.location, "select_and_scatter: window attributes must "
                                           f"have one entry per operand dimension ({rank})")
        return _Window(operand, source, sizes, strides, padding[0::2], padding[1::2])


def _takes_windows(op: ir.Operation) -> bool:
    """Whether the vector form applies: static shapes, elementwise regions on
    scalars, a window of at most MAX_WINDOW positions, no negative padding."""
    operand, source = (ir.RankedTensorType(v.type) for v in op.operands[:2])
    if not (operand.has_static_shape and source.has_static_shape) or operand.rank == 0:
        return False
    w = _Window.of(op)
    if len(w.sizes) != operand.rank or math.prod(w.sizes) > select_and_scatter_windows.MAX_WINDOW \
            or min(w.pad_low + w.pad_high, default=0) < 0 or min(source.shape) < 1:
        return False
    return select_and_scatter_windows.elementwise_regions(op)


def _ints(op: ir.Operation, name: str, default: list[int]) -> list[int]:
    if name not in op.attributes:
        return default
    attr = op.attributes[name]
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return list(attr)
    return [int(v) for v in ir.DenseIntElementsAttr(attr)]


def _helper_text(w: _Window, name: str, select: str, scatter: str) -> str:
    elem = str(w.operand.element_type)
    scalar, out_t, src_t = f"tensor<{elem}>", str(w.operand), str(w.source)
    n_src, n_win = math.prod(w.source.shape), math.prod(w.sizes)
    src_idx = delinearize("%i", w.source.shape, "s")
    win_idx = delinearize("%w", w.sizes, "k")
    position = "\n      ".join(_operand_pos(d, w) for d in range(w.operand.rank))
    in_bounds = _all_in_bounds(w.operand.shape)
    sel = delinearize("%sel", w.operand.shape, "q")
    o_names = [f"%o{d}" for d in range(w.operand.rank)]
    o_list = ", ".join(o_names)
    p_list = ", ".join(f"%p{d}" for d in range(w.operand.rank))
    q_list = ", ".join(f"%q{d}" for d in range(w.operand.rank))
    s_list = ", ".join(f"%s{d}" for d in range(w.operand.rank))
    return f"""
func.func private @{name}(%operand: {out_t}, %source: {src_t}, %init: {scalar}) -> {out_t} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n_src = arith.constant {n_src} : index
  %n_win = arith.constant {n_win} : index
  %false = arith.constant false
  %true = arith.constant true
  %init_value = tensor.extract %init[] : {scalar}
  %filled = tensor.splat %init_value : {out_t}
  %result = scf.for %i = %c0 to %n_src step %c1 iter_args(%acc = %filled) -> ({out_t}) {{
    {src_idx}
    %found, %sel = scf.for %w = %c0 to %n_win step %c1
        iter_args(%have = %false, %at = %c0) -> (i1, index) {{
      {win_idx}
      {position}
      {in_bounds}
      %next:2 = scf.if %inside -> (i1, index) {{
        {_linearize(o_names, w.operand.shape, "lin")}
        %take = scf.if %have -> (i1) {{
          {delinearize("%at", w.operand.shape, "p")}
          %cur_v = tensor.extract %operand[{p_list}] : {out_t}
          %cur = tensor.from_elements %cur_v : {scalar}
          %cand_v = tensor.extract %operand[{o_list}] : {out_t}
          %cand = tensor.from_elements %cand_v : {scalar}
          %keep_t = func.call @{select}(%cur, %cand) : ({scalar}, {scalar}) -> tensor<i1>
          %keep = tensor.extract %keep_t[] : tensor<i1>
          %replace = arith.xori %keep, %true : i1
          scf.yield %replace : i1
        }} else {{
          scf.yield %true : i1
        }}
        %at2 = arith.select %take, %lin, %at : index
        scf.yield %true, %at2 : i1, index
      }} else {{
        scf.yield %have, %at : i1, index
      }}
      scf.yield %next#0, %next#1 : i1, index
    }}
    %updated = scf.if %found -> ({out_t}) {{
      {sel}
      %old = tensor.extract %acc[{q_list}] : {out_t}
      %old_t = tensor.from_elements %old : {scalar}
      %src = tensor.extract %source[{s_list}] : {src_t}
      %src_t = tensor.from_elements %src : {scalar}
      %new_t = func.call @{scatter}(%old_t, %src_t) : ({scalar}, {scalar}) -> {scalar}
      %new = tensor.extract %new_t[] : {scalar}
      %ins = tensor.insert %new into %acc[{q_list}] : {out_t}
      scf.yield %ins : {out_t}
    }} else {{
      scf.yield %acc : {out_t}
    }}
    scf.yield %updated : {out_t}
  }}
  return %result : {out_t}
}}
"""


def _linearize(indices: list[str], shape: list[int], name: str) -> str:
    """%<name>: the row-major flat index of ``indices`` in ``shape``."""
    lines, acc = [f"%{name}_0 = arith.constant 0 : index"], f"%{name}_0"
    for d, (index, size) in enumerate(zip(indices, shape)):
        lines += [f"%{name}_size{d} = arith.constant {size} : index",
                  f"%{name}_mul{d} = arith.muli {acc}, %{name}_size{d} : index",
                  f"%{name}_add{d} = arith.addi %{name}_mul{d}, {index} : index"]
        acc = f"%{name}_add{d}"
    lines.append(f"%{name} = arith.addi {acc}, %c0 : index")
    return "\n        ".join(lines)


def _operand_pos(d: int, w: _Window) -> str:
    """%o<d>: the operand position of window element k<d> of source element s<d>."""
    return "\n      ".join([
        f"%stride{d} = arith.constant {w.strides[d]} : index",
        f"%pad{d} = arith.constant {w.pad_low[d]} : index",
        f"%o{d}_s = arith.muli %s{d}, %stride{d} : index",
        f"%o{d}_k = arith.addi %o{d}_s, %k{d} : index",
        f"%o{d} = arith.subi %o{d}_k, %pad{d} : index"])


def _all_in_bounds(shape: list[int]) -> str:
    """%inside: whether every %o<d> lies inside the operand (else it is padding)."""
    lines, prev = [], "%true"
    for d, size in enumerate(shape):
        lines += [f"%lo{d} = arith.cmpi sge, %o{d}, %c0 : index",
                  f"%dim{d} = arith.constant {size} : index",
                  f"%hi{d} = arith.cmpi slt, %o{d}, %dim{d} : index",
                  f"%lohi{d} = arith.andi %lo{d}, %hi{d} : i1",
                  f"%ok{d} = arith.andi {prev}, %lohi{d} : i1"]
        prev = f"%ok{d}"
    lines.append(f"%inside = arith.andi {prev}, %true : i1")
    return "\n      ".join(lines)
