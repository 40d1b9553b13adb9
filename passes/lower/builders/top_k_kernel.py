"""MLIR text of the top-k helper that xla-lower-top-k defines.

Each row (the last dim; rows in parallel) is read once, in order, against a
buffer of the k largest seen so far, sorted: an element smaller than the
buffer's last (almost every element of a long row) costs one compare; a
larger one is inserted in its place, the rest shifting down. Elements are
compared by a 64-bit key with the order of ``compare GT, TOTALORDER`` (what
chlo.top_k's legalization sorts by): a float's bits, its magnitude bits
flipped when negative, so -NaN < -inf < -0 < +0 < inf < NaN. Equal keys keep
the earlier element first, as the stable sort does.
"""

from __future__ import annotations

import math

from xlac.dtypes import tensor_type

_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i8": 8, "i16": 16, "i32": 32, "i64": 64}


def supported(element: str) -> bool:
    return element in _BITS


def helper_text(name: str, shape: list[int], element: str, k: int, index: str) -> str:
    """``@name(%x) -> (values, indices)`` over the last dim of ``shape``."""
    rows, n = math.prod(shape[:-1]), shape[-1]
    full, flat = tensor_type(shape, element), tensor_type([rows, n], element)
    out_shape = [*shape[:-1], k]
    out_v, out_i = tensor_type(out_shape, element), tensor_type(out_shape, index)
    flat_v, flat_i = tensor_type([rows, k], element), tensor_type([rows, k], index)
    groups = [list(range(len(shape) - 1)), [len(shape) - 1]] if len(shape) > 1 else None
    if groups is None:
        collapse = f"  %x2 = tensor.expand_shape %x [[0, 1]] output_shape [1, {n}] : {full} into {flat}"
        expand = [f"  %v = tensor.collapse_shape %r#0 [[0, 1]] : {flat_v} into {out_v}",
                  f"  %i = tensor.collapse_shape %r#1 [[0, 1]] : {flat_i} into {out_i}"]
    else:
        reassoc = str(groups).replace(" ", "")
        collapse = f"  %x2 = tensor.collapse_shape %x {reassoc} : {full} into {flat}"
        dims = ", ".join(map(str, out_shape))
        expand = [f"  %v = tensor.expand_shape %r#0 {reassoc} output_shape [{dims}] : {flat_v} into {out_v}",
                  f"  %i = tensor.expand_shape %r#1 {reassoc} output_shape [{dims}] : {flat_i} into {out_i}"]
    return "\n".join([
        f"func.func private @{name}(%x: {full}) -> ({out_v}, {out_i}) {{",
        collapse,
        f"  %r:2 = call @{name}_rows(%x2) : ({flat}) -> ({flat_v}, {flat_i})",
        *expand,
        f"  return %v, %i : {out_v}, {out_i}",
        "}",
        _rows_text(name, rows, n, k, element, index),
    ]) + "\n"


def _key_lines(element: str, value: str) -> list[str]:
    """SSA lines computing ``%key`` (i64) of ``value``."""
    bits = _BITS[element]
    if element.startswith("i"):
        return [f"%key = arith.extsi {value} : {element} to i64" if bits < 64
                else f"%key = arith.addi {value}, %zero64 : i64"]
    ity = f"i{bits}"
    return [f"%b = arith.bitcast {value} : {element} to {ity}",
            f"%sh = arith.constant {bits - 1} : {ity}",
            f"%mag = arith.constant {(1 << (bits - 1)) - 1} : {ity}",
            f"%sign = arith.shrsi %b, %sh : {ity}",
            f"%flip = arith.andi %sign, %mag : {ity}",
            f"%ord = arith.xori %b, %flip : {ity}",
            f"%key = arith.extsi %ord : {ity} to i64" if bits < 64 else "%key = arith.addi %ord, %zero64 : i64"]


def _rows_text(name: str, rows: int, n: int, k: int, element: str, index: str) -> str:
    flat = tensor_type([rows, n], element)
    flat_v, flat_i = tensor_type([rows, k], element), tensor_type([rows, k], index)
    row_v, row_i = tensor_type([1, k], element), tensor_type([1, k], index)
    keys, idx = f"tensor<{k}xi64>", f"tensor<{k}xindex>"
    key = "\n".join("          " + line for line in _key_lines(element, "%e"))
    return f"""func.func private @{name}_rows(%x: {flat}) -> ({flat_v}, {flat_i}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  %kk = arith.constant {k} : index
  %last = arith.constant {k - 1} : index
  %zero64 = arith.constant 0 : i64
  %ov0 = tensor.empty() : {flat_v}
  %oi0 = tensor.empty() : {flat_i}
  %kb0 = tensor.empty() : {keys}
  %ib0 = tensor.empty() : {idx}
  %res:2 = scf.forall (%row) in ({rows}) shared_outs(%ov = %ov0, %oi = %oi0) -> ({flat_v}, {flat_i}) {{
    %buf:3 = scf.for %j = %c0 to %n step %c1 iter_args(%kb = %kb0, %ib = %ib0, %cnt = %c0)
        -> ({keys}, {idx}, index) {{
      %e = tensor.extract %x[%row, %j] : {flat}
{key}
      %lastkey = tensor.extract %kb[%last] : {keys}
      %notfull = arith.cmpi ult, %cnt, %kk : index
      %bigger = arith.cmpi sgt, %key, %lastkey : i64
      %take = arith.ori %notfull, %bigger : i1
      %next:3 = scf.if %take -> ({keys}, {idx}, index) {{
        %pos = scf.for %q = %c0 to %kk step %c1 iter_args(%p = %c0) -> (index) {{
          %filled = arith.cmpi ult, %q, %cnt : index
          %qk = tensor.extract %kb[%q] : {keys}
          %ge = arith.cmpi sge, %qk, %key : i64
          %before = arith.andi %filled, %ge : i1
          %p1 = arith.addi %p, %c1 : index
          %p2 = arith.select %before, %p1, %p : index
          scf.yield %p2 : index
        }}
        %shifted:2 = scf.for %t = %c0 to %kk step %c1 iter_args(%nk = %kb, %ni = %ib) -> ({keys}, {idx}) {{
          %q = arith.subi %last, %t : index
          %below = arith.cmpi ugt, %q, %pos : index
          %here = arith.cmpi eq, %q, %pos : index
          %qm = arith.subi %q, %c1 : index
          %src = arith.select %below, %qm, %q : index
          %sk = tensor.extract %kb[%src] : {keys}
          %si = tensor.extract %ib[%src] : {idx}
          %vk = arith.select %here, %key, %sk : i64
          %vi = arith.select %here, %j, %si : index
          %write = arith.cmpi uge, %q, %pos : index
          %nk1 = scf.if %write -> ({keys}) {{
            %w = tensor.insert %vk into %nk[%q] : {keys}
            scf.yield %w : {keys}
          }} else {{
            scf.yield %nk : {keys}
          }}
          %ni1 = scf.if %write -> ({idx}) {{
            %w = tensor.insert %vi into %ni[%q] : {idx}
            scf.yield %w : {idx}
          }} else {{
            scf.yield %ni : {idx}
          }}
          scf.yield %nk1, %ni1 : {keys}, {idx}
        }}
        %c2 = arith.addi %cnt, %c1 : index
        %cnt1 = arith.minui %c2, %kk : index
        scf.yield %shifted#0, %shifted#1, %cnt1 : {keys}, {idx}, index
      }} else {{
        scf.yield %kb, %ib, %cnt : {keys}, {idx}, index
      }}
      scf.yield %next#0, %next#1, %next#2 : {keys}, {idx}, index
    }}
    %rv0 = tensor.empty() : {row_v}
    %ri0 = tensor.empty() : {row_i}
    %out:2 = scf.for %q = %c0 to %kk step %c1 iter_args(%rv = %rv0, %ri = %ri0) -> ({row_v}, {row_i}) {{
      %src = tensor.extract %buf#1[%q] : {idx}
      %value = tensor.extract %x[%row, %src] : {flat}
      %pos = arith.index_cast %src : index to {index}
      %rv1 = tensor.insert %value into %rv[%c0, %q] : {row_v}
      %ri1 = tensor.insert %pos into %ri[%c0, %q] : {row_i}
      scf.yield %rv1, %ri1 : {row_v}, {row_i}
    }}
    scf.forall.in_parallel {{
      tensor.parallel_insert_slice %out#0 into %ov[%row, 0] [1, {k}] [1, 1] : {row_v} into {flat_v}
      tensor.parallel_insert_slice %out#1 into %oi[%row, 0] [1, {k}] [1, 1] : {row_i} into {flat_i}
    }}
  }}
  return %res#0, %res#1 : {flat_v}, {flat_i}
}}"""
