"""MLIR text of the helper functions that xla-lower-sort calls.

The helper sorts every row of a ``[rows, n]`` view of the operands with a
bottom-up merge sort (O(n log n) comparator calls, stable) that moves the
operands themselves: each pass streams through memory, where sorting an index
permutation read the keys at random (twice as slow on 1M floats). The comparator
is called on 0-d tensors, exactly as the sort region receives them, so its
StableHLO body needs no translation here: the inliner and the upstream
legalization handle it inside the loops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlac.passes.helper_calls import tensor_type
from xlac.passes.lower.builders.sort_radix import RadixKey, rows_text
from xlac.passes.lower.builders.sort_rows import RowLoop


@dataclass(frozen=True)
class SortSignature:
    """The shapes and names one helper is generated for."""

    name: str                  # helper symbol; the comparator is ``name + "_cmp"``
    shape: tuple[int, ...]     # common shape of every operand
    elements: tuple[str, ...]  # element type of each operand, as MLIR text
    dimension: int             # the sort dimension
    captures: tuple[str, ...] = ()  # types of outer values the comparator uses
    parallel: bool = False     # rows in an scf.forall (each with its own scratch), not an scf.for
    radix: RadixKey | None = None  # a comparator that is `key < key'` of integers: radix sort

    @property
    def comparator(self) -> str:
        return self.name + "_cmp"


def helper_text(sig: SortSignature) -> str:
    """The helper and its row kernel; the pass declares the comparator (not
    called by a radix sort's kernel, which reads the keys' bytes instead)."""
    if sig.radix is not None:
        _, _, rows, n = _row_view(sig)
        signless = (sig.elements[0].removeprefix("u"), *sig.elements[1:])
        return _wrapper(sig) + rows_text(sig.name + "_rows", signless, rows, n, sig.radix,
                                         sig.parallel)
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
    called = list(flat)
    if sig.radix is not None and sig.elements[0].startswith("ui"):   # arith takes signless keys
        called[0] = tensor_type([rows, n], sig.elements[0][1:])
        lines.append(f"  %key = stablehlo.bitcast_convert {operands[0]} : ({flat[0]}) -> {called[0]}")
        operands[0] = "%key"
    lines.append(f"  %s:{len(flat)} = func.call @{sig.name}_rows("
                 f"{', '.join(operands + _capture_names(sig))}) : "
                 f"({', '.join(called + list(sig.captures))}) -> ({', '.join(called)})")
    sorted_ = [f"%s#{k}" for k in range(len(flat))]
    if called[0] != flat[0]:
        lines.append(f"  %keys = stablehlo.bitcast_convert %s#0 : ({called[0]}) -> {flat[0]}")
        sorted_[0] = "%keys"
    results = []
    for k, e in enumerate(sig.elements):
        back = _reshape(lines, sorted_[k], f"%u{k}", flat[k], tensor_type(moved, e))
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
    """For each row (sort_rows.py): copy it in, merge-sort the operands themselves
    between the scratch's two rows, copy it out."""
    _, _, rows, n = _row_view(sig)
    loop = RowLoop(sig.elements, rows, n, sig.parallel)
    bufs = loop.scratch
    count = len(bufs)
    passes = (n - 1).bit_length() if n > 1 else 0  # ceil(log2(n)) merge rounds
    return f"""func.func private @{sig.name}_rows({_params(sig, loop.flat)}) -> ({", ".join(loop.flat)}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %rows = arith.constant {rows} : index
  %n = arith.constant {n} : index
  %passes = arith.constant {passes} : index
  %final = arith.constant {passes % 2} : index
{loop.head()}
    %sorted:{count} = scf.for %pass = %c0 to %passes step %c1
        iter_args({_iter("buf", "in", count)}) -> ({", ".join(bufs)}) {{
      %from = arith.andi %pass, %c1 : index
      %to = arith.xori %from, %c1 : index
      %width = arith.shli %c1, %pass : index
      %span = arith.shli %width, %c1 : index
      %merged:{count} = scf.for %lo = %c0 to %n step %span
          iter_args({_iter("d", "buf", count)}) -> ({", ".join(bufs)}) {{
        %mid0 = arith.addi %lo, %width : index
        %mid = arith.minui %mid0, %n : index
        %hi0 = arith.addi %lo, %span : index
        %hi = arith.minui %hi0, %n : index
        %last_left = arith.subi %mid, %c1 : index
        %last_right = arith.subi %hi, %c1 : index
{_merge(sig, bufs)}
        scf.yield {", ".join(f"%m#{k + 2}" for k in range(count))} : {", ".join(bufs)}
      }}
      scf.yield {", ".join(f"%merged#{k}" for k in range(count))} : {", ".join(bufs)}
    }}
{loop.tail("%final")}
}}
"""


def _merge(sig: SortSignature, bufs: list[str]) -> str:
    """Merge halves [lo, mid) and [mid, hi) of row %from into row %to.

    Each operand's two rows live in one tensor so that every insert is in
    place. No branch: both heads are read at clamped positions (in range even
    when a half is used up) and selects pick the one to move, since a
    mispredicted branch per element costs more than the comparator on random
    keys. Ties keep the left, so the sort is stable.
    """
    count = len(bufs)
    types = ", ".join(bufs)
    moves = []
    for k in range(count):
        moves.append(f"          %lv{k} = tensor.extract %dd{k}[%from, %ic] : {bufs[k]}")
        moves.append(f"          %rv{k} = tensor.extract %dd{k}[%from, %jc] : {bufs[k]}")
        moves.append(f"          %v{k} = arith.select %right_first, %rv{k}, %lv{k} : "
                     f"{sig.elements[k]}")
        moves.append(f"          %dn{k} = tensor.insert %v{k} into %dd{k}[%to, %k] : {bufs[k]}")
    return f"""        %m:{count + 2} = scf.for %k = %lo to %hi step %c1
            iter_args(%i = %lo, %j = %mid, {_iter("dd", "d", count)}) -> (index, index, {types}) {{
          %left_done = arith.cmpi uge, %i, %mid : index
          %right_done = arith.cmpi uge, %j, %hi : index
          %ic = arith.minui %i, %last_left : index
          %jc = arith.minui %j, %last_right : index
{_lines(moves[k * 4 + 0] + chr(10) + moves[k * 4 + 1] for k in range(count))}
{_compare(sig)}
          %right_live = arith.xori %right_done, %true : i1
          %right_less = arith.andi %right_live, %less : i1
          %right_first = arith.ori %left_done, %right_less : i1
{_lines(moves[k * 4 + 2] + chr(10) + moves[k * 4 + 3] for k in range(count))}
          %i1 = arith.addi %i, %c1 : index
          %j1 = arith.addi %j, %c1 : index
          %i2 = arith.select %right_first, %i, %i1 : index
          %j2 = arith.select %right_first, %j1, %j : index
          scf.yield %i2, %j2, {", ".join(f"%dn{k}" for k in range(count))} : index, index, {types}
        }}"""


def _compare(sig: SortSignature) -> str:
    """%less = comparator(right heads, left heads): the right moves first only if strictly less."""
    lines, args, types = [], [], []
    for k, e in enumerate(sig.elements):
        for side in ("r", "l"):
            lines.append(f"%{side}t{k} = tensor.from_elements %{side}v{k} : tensor<{e}>")
            args.append(f"%{side}t{k}")
            types.append(f"tensor<{e}>")
    args += _capture_names(sig)
    types += sig.captures
    lines.append(f"%less_t = func.call @{sig.comparator}({', '.join(args)}) : "
                 f"({', '.join(types)}) -> tensor<i1>")
    lines.append("%less = tensor.extract %less_t[] : tensor<i1>")
    return _lines("          " + line for line in lines)


def _iter(name: str, init: str, count: int) -> str:
    return ", ".join(f"%{name}{k} = %{init}{k}" for k in range(count))


def _lines(lines) -> str:
    return "\n".join(lines)
