"""MLIR text of the helper functions that xla-lower-sort calls.

The helper sorts every row of a ``[rows, n]`` view of the operands with a
bottom-up merge sort of an index permutation (O(n log n) comparator calls,
stable), then gathers each operand through the permutation. The comparator
is called on 0-d tensors, exactly as the sort region receives them, so its
StableHLO body needs no translation here: the inliner and the upstream
legalization handle it inside the loops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlac.passes.helper_calls import tensor_type


@dataclass(frozen=True)
class SortSignature:
    """The shapes and names one helper is generated for."""

    name: str                  # helper symbol; the comparator is ``name + "_cmp"``
    shape: tuple[int, ...]     # common shape of every operand
    elements: tuple[str, ...]  # element type of each operand, as MLIR text
    dimension: int             # the sort dimension
    captures: tuple[str, ...] = ()  # types of outer values the comparator uses

    @property
    def comparator(self) -> str:
        return self.name + "_cmp"


def helper_text(sig: SortSignature) -> str:
    """The helper and its row kernel; the pass declares the comparator."""
    return _wrapper(sig) + _kernel(sig)


def _row_view(sig: SortSignature) -> tuple[list[int], list[int], int, int]:
    """The transpose that puts the sort dimension last, its shape, rows, n."""
    rank = len(sig.shape)
    perm = [d for d in range(rank) if d != sig.dimension] + [sig.dimension]
    moved = [sig.shape[d] for d in perm]
    n = sig.shape[sig.dimension]
    return perm, moved, math.prod(moved[:-1]), n


def _wrapper(sig: SortSignature) -> str:
    """Transpose + reshape each operand to [rows, n], sort, and undo both."""
    perm, moved, rows, n = _row_view(sig)
    inverse = [perm.index(d) for d in range(len(perm))]
    full = [tensor_type(sig.shape, e) for e in sig.elements]
    flat = [tensor_type([rows, n], e) for e in sig.elements]
    lines = [f"func.func private @{sig.name}({_params(sig, full)}) -> ({', '.join(full)}) {{"]
    operands = []
    for k, e in enumerate(sig.elements):
        moved_k = tensor_type(moved, e)
        transposed = _transpose(lines, f"%a{k}", f"%t{k}", perm, full[k], moved_k)
        operands.append(_reshape(lines, transposed, f"%r{k}", moved_k, flat[k]))
    lines.append(f"  %s:{len(flat)} = func.call @{sig.name}_rows("
                 f"{', '.join(operands + _capture_names(sig))}) : "
                 f"({', '.join(flat + list(sig.captures))}) -> ({', '.join(flat)})")
    results = []
    for k, e in enumerate(sig.elements):
        back = _reshape(lines, f"%s#{k}", f"%u{k}", flat[k], tensor_type(moved, e))
        results.append(_transpose(lines, back, f"%b{k}", inverse, tensor_type(moved, e), full[k]))
    lines.append(f"  return {', '.join(results)} : {', '.join(full)}")
    return _lines(lines) + "\n}\n"


def _transpose(lines: list[str], value: str, name: str, perm: list[int],
               source: str, target: str) -> str:
    """Append a transpose unless ``perm`` is the identity; the result's name."""
    if perm == sorted(perm):
        return value
    lines.append(f"  {name} = stablehlo.transpose {value}, dims = {perm} : ({source}) -> {target}")
    return name


def _reshape(lines: list[str], value: str, name: str, source: str, target: str) -> str:
    """Append a reshape unless the types agree; the result's name."""
    if source == target:
        return value
    lines.append(f"  {name} = stablehlo.reshape {value} : ({source}) -> {target}")
    return name


def _params(sig: SortSignature, operand_types: list[str]) -> str:
    """``%a0: T0, ..., %cap0: C0, ...``: the operands, then the captures."""
    params = [f"%a{k}: {t}" for k, t in enumerate(operand_types)]
    params += [f"{name}: {t}" for name, t in zip(_capture_names(sig), sig.captures)]
    return ", ".join(params)


def _capture_names(sig: SortSignature) -> list[str]:
    return [f"%cap{k}" for k in range(len(sig.captures))]


def _kernel(sig: SortSignature) -> str:
    """For each row: merge-sort a permutation, then gather through it."""
    _, _, rows, n = _row_view(sig)
    flat = [tensor_type([rows, n], e) for e in sig.elements]
    count = len(flat)
    outs = ", ".join(flat)
    passes = (n - 1).bit_length() if n > 1 else 0  # ceil(log2(n)) merge rounds
    return f"""func.func private @{sig.name}_rows({_params(sig, flat)}) -> ({outs}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant {rows} : index
  %n = arith.constant {n} : index
  %passes = arith.constant {passes} : index
  %final = arith.constant {passes % 2} : index
  %scratch = tensor.empty() : tensor<2x{n}xindex>
{_lines(f"  %e{k} = tensor.empty() : {t}" for k, t in enumerate(flat))}
  %res:{count} = scf.for %row = %c0 to %rows step %c1 iter_args({_iter("o", "e", count)}) -> ({outs}) {{
    %iota = scf.for %i = %c0 to %n step %c1 iter_args(%p = %scratch) -> (tensor<2x{n}xindex>) {{
      %p1 = tensor.insert %i into %p[%c0, %i] : tensor<2x{n}xindex>
      scf.yield %p1 : tensor<2x{n}xindex>
    }}
    %sorted = scf.for %pass = %c0 to %passes step %c1
        iter_args(%buf = %iota) -> (tensor<2x{n}xindex>) {{
      %from = arith.andi %pass, %c1 : index
      %to = arith.xori %from, %c1 : index
      %width = arith.shli %c1, %pass : index
      %span = arith.shli %width, %c1 : index
      %merged = scf.for %lo = %c0 to %n step %span iter_args(%d = %buf) -> (tensor<2x{n}xindex>) {{
        %mid0 = arith.addi %lo, %width : index
        %mid = arith.minui %mid0, %n : index
        %hi0 = arith.addi %lo, %span : index
        %hi = arith.minui %hi0, %n : index
{_merge(sig, n)}
        scf.yield %m#2 : tensor<2x{n}xindex>
      }}
      scf.yield %merged : tensor<2x{n}xindex>
    }}
{_gather(sig, n, flat)}
    scf.yield {", ".join(f"%g#{k}" for k in range(count))} : {outs}
  }}
  return {", ".join(f"%res#{k}" for k in range(count))} : {outs}
}}
"""


def _merge(sig: SortSignature, n: int) -> str:
    """Merge halves [lo, mid) and [mid, hi) of row %from into row %to.

    Both rows live in one tensor so that every insert is in place: the
    merge reads only row %from and writes only row %to. Ties keep the left.
    """
    idx = f"tensor<2x{n}xindex>"
    return f"""        %m:3 = scf.for %k = %lo to %hi step %c1
            iter_args(%i = %lo, %j = %mid, %dd = %d) -> (index, index, {idx}) {{
          %left_done = arith.cmpi uge, %i, %mid : index
          %right_done = arith.cmpi uge, %j, %hi : index
          %either_done = arith.ori %left_done, %right_done : i1
          %right_first = scf.if %either_done -> (i1) {{
            scf.yield %left_done : i1
          }} else {{
            %pi = tensor.extract %dd[%from, %i] : {idx}
            %pj = tensor.extract %dd[%from, %j] : {idx}
{_compare(sig, "%pj", "%pi")}
            scf.yield %less : i1
          }}
          %next = arith.select %right_first, %j, %i : index
          %v = tensor.extract %dd[%from, %next] : {idx}
          %dd1 = tensor.insert %v into %dd[%to, %k] : {idx}
          %i1 = arith.addi %i, %c1 : index
          %j1 = arith.addi %j, %c1 : index
          %i2 = arith.select %right_first, %i, %i1 : index
          %j2 = arith.select %right_first, %j1, %j : index
          scf.yield %i2, %j2, %dd1 : index, index, {idx}
        }}"""


def _compare(sig: SortSignature, lhs: str, rhs: str) -> str:
    """%less = comparator(operands at column lhs, operands at column rhs)."""
    lines, args, types = [], [], []
    for k, e in enumerate(sig.elements):
        for side, col in (("l", lhs), ("r", rhs)):
            lines.append(f"%{side}s{k} = tensor.extract %a{k}[%row, {col}] : "
                         f"{tensor_type([_rows(sig), sig.shape[sig.dimension]], e)}")
            lines.append(f"%{side}t{k} = tensor.from_elements %{side}s{k} : tensor<{e}>")
            args.append(f"%{side}t{k}")
            types.append(f"tensor<{e}>")
    args += _capture_names(sig)
    types += sig.captures
    lines.append(f"%less_t = func.call @{sig.comparator}({', '.join(args)}) : "
                 f"({', '.join(types)}) -> tensor<i1>")
    lines.append("%less = tensor.extract %less_t[] : tensor<i1>")
    return _lines("            " + line for line in lines)


def _gather(sig: SortSignature, n: int, flat: list[str]) -> str:
    """Row ``%row`` of each output = the input row permuted by the sorted permutation."""
    count = len(flat)
    body = [f"      %q = tensor.extract %sorted[%final, %col] : tensor<2x{n}xindex>"]
    for k in range(count):
        body.append(f"      %v{k} = tensor.extract %a{k}[%row, %q] : {flat[k]}")
        body.append(f"      %w{k} = tensor.insert %v{k} into %x{k}[%row, %col] : {flat[k]}")
    body.append("      scf.yield " + ", ".join(f"%w{k}" for k in range(count)) + " : "
                + ", ".join(flat))
    return (f"    %g:{count} = scf.for %col = %c0 to %n step %c1 "
            f"iter_args({_iter('x', 'o', count)}) -> ({', '.join(flat)}) {{\n"
            + _lines(body) + "\n    }")


def _rows(sig: SortSignature) -> int:
    return _row_view(sig)[2]


def _iter(name: str, init: str, count: int) -> str:
    return ", ".join(f"%{name}{k} = %{init}{k}" for k in range(count))


def _lines(lines) -> str:
    return "\n".join(lines)
