"""MLIR text of a prefix (suffix) sum along each row, read and written in place.

Rows go 8 at a time, one a lane (the groups in parallel, `scf.forall`); each
part of a row (the 2 of a complex pair, xla-complex-as-pairs; else 1) is
scanned in XLA's CPU order (window_text.py): blocks of 16 in order (a suffix
window from its first element on), the blocks' totals the same way (levels
unrolled here, the last block padded with the identity), each element
combined with the totals before (after) its block, block 0 with the identity
as the blocked scan's pad gives it. So every sum rounds as the transposed
form's did, bit for bit. The group's elements are read and written with
strided vector transfers: no transposed copy of the operand is made.
"""

from __future__ import annotations

import math

from xlac.dtypes import tensor_type

BLOCK = 16


def _levels(n: int) -> list[int]:
    sizes = [n]
    while sizes[-1] > BLOCK:
        sizes.append(-(-sizes[-1] // BLOCK))
    return sizes


class _Row:
    """The lines of one group's scan, for one part (``%p``): values are
    vectors of ``lanes`` rows' elements (``element``, e.g. vector<8xf64>)."""

    def __init__(self, element: str, op: str, reverse: bool, group_t: str, lanes: int, scalar: str):
        self.element, self.op, self.reverse = element, op, reverse
        self.group_t, self.lanes, self.scalar = group_t, lanes, scalar
        self.lines: list[str] = []
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"%{stem}{self.count}"

    def add(self, text: str, stem: str = "v") -> str:
        name = self.fresh(stem)
        self.lines.append(f"{name} = {text}")
        return name

    def const(self, value: int) -> str:
        return self.add(f"arith.constant {value} : index", "c")

    def read(self, source: tuple[str, str], i: str, size: int, padded: bool) -> str:
        """Element ``i`` of a level's input (the identity past its end)."""
        tensor, ttype = source
        if not padded:
            return self.get(tensor, ttype, i)
        last = self.const(size - 1)
        inside = self.add(f"arith.cmpi ult, {i}, {self.const(size)} : index")
        at = self.add(f"arith.minui {i}, {last} : index")
        value = self.get(tensor, ttype, at)
        return self.add(f"arith.select {inside}, {value}, %ident : {self.element}")

    def get(self, tensor: str, ttype: str, i: str) -> str:
        """Element ``i`` of every row of the group (the group's operand or
        result: a strided read across rows; a scratch level: one vector)."""
        if ttype == self.group_t:
            return self.add(f"vector.transfer_read {tensor}[%c0, {i}, %p], %pad {{in_bounds = [true], "
                            f"permutation_map = affine_map<(d0, d1, d2) -> (d0)>}} : {ttype}, {self.element}")
        return self.add(f"vector.transfer_read {tensor}[{i}, %c0], %pad {{in_bounds = [true]}} : "
                        f"{ttype}, {self.element}")

    def put(self, value: str, tensor: str, ttype: str, i: str) -> str:
        if ttype == self.group_t:
            return self.add(f"vector.transfer_write {value}, {tensor}[%c0, {i}, %p] {{in_bounds = [true], "
                            f"permutation_map = affine_map<(d0, d1, d2) -> (d0)>}} : {self.element}, {ttype}")
        return self.add(f"vector.transfer_write {value}, {tensor}[{i}, %c0] {{in_bounds = [true]}} : "
                        f"{self.element}, {ttype}")

    def combine(self, a: str, b: str) -> str:
        return self.add(f"{self.op} {a}, {b} : {self.element}")


def _within_blocks(row: _Row, source, size: int, scratch: str, scratch_t: str,
                   totals: str, totals_t: str, blocks: int, edge: int) -> tuple[str, str]:
    """Each block of ``size`` elements scanned in order into ``scratch``, its
    total (element ``edge`` of the block's scan) into ``totals``."""
    padded = blocks * BLOCK != size
    b, w, tot = row.fresh("b"), row.fresh("w"), row.fresh("t")
    out = row.fresh("r")
    row.lines.append(f"{out}:2 = scf.for {b} = %c0 to {row.const(blocks)} step %c1 "
                     f"iter_args({w} = {scratch}, {tot} = {totals}) -> ({scratch_t}, {totals_t}) {{")
    base = row.add(f"arith.muli {b}, %c16 : index")
    scanned = _block_scan(row, source, size, padded, base, w, scratch_t, BLOCK)
    at = row.add(f"arith.addi {base}, {row.const(edge)} : index")
    total = row.get(scanned, scratch_t, at)
    tot2 = row.put(total, tot, totals_t, b)
    row.lines.append(f"scf.yield {scanned}, {tot2} : {scratch_t}, {totals_t}")
    row.lines.append("}")
    return f"{out}#0", f"{out}#1"


def _block_scan(row: _Row, source, size, padded, base, into, into_t, length) -> str:
    """One block's ``length`` elements from ``base``, each window combined from
    its first element to its last (XLA's reduce_window loop), into ``into``."""
    idx = [row.add(f"arith.addi {base}, {row.const(j)} : index") for j in range(length)]
    parts = [row.read(source, i, size, padded) for i in idx]
    value = into
    if row.reverse:
        for j in range(length):
            acc = parts[j]
            for k in range(j + 1, length):
                acc = row.combine(acc, parts[k])
            value = row.put(acc, value, into_t, idx[j])
    else:
        acc = parts[0]
        for j in range(length):
            acc = acc if j == 0 else row.combine(acc, parts[j])
            value = row.put(acc, value, into_t, idx[j])
    return value


def _spread(row: _Row, within: str, within_t: str, sums: str, sums_t: str, size: int,
            out: str, out_t: str, blocks: int) -> str:
    """Each of the first ``size`` elements of ``within`` combined with the sum
    of the blocks before (after) its own, into ``out``."""
    b, acc = row.fresh("b"), row.fresh("o")
    res = row.fresh("r")
    row.lines.append(f"{res} = scf.for {b} = %c0 to {row.const(blocks)} step %c1 "
                     f"iter_args({acc} = {out}) -> ({out_t}) {{")
    if row.reverse:
        nxt = row.add(f"arith.addi {b}, %c1 : index")
        other = row.read((sums, sums_t), nxt, blocks, True)
    else:
        inside = row.add(f"arith.cmpi ugt, {b}, %c0 : index")
        prev = row.add(f"arith.subi {b}, %c1 : index")
        prev = row.add(f"arith.select {inside}, {prev}, %c0 : index")
        value = row.get(sums, sums_t, prev)
        other = row.add(f"arith.select {inside}, {value}, %ident : {row.element}")
    base = row.add(f"arith.muli {b}, %c16 : index")
    left = row.add(f"arith.subi {row.const(size)}, {base} : index")
    count = row.add(f"arith.minui {left}, %c16 : index")
    j, acc2 = row.fresh("j"), row.fresh("o")
    res2 = row.fresh("r")
    row.lines.append(f"{res2} = scf.for {j} = %c0 to {count} step %c1 "
                     f"iter_args({acc2} = {acc}) -> ({out_t}) {{")
    i = row.add(f"arith.addi {base}, {j} : index")
    w = row.get(within, within_t, i)
    value = row.combine(w, other) if row.reverse else row.combine(other, w)
    put = row.put(value, acc2, out_t, i)
    row.lines.append(f"scf.yield {put} : {out_t}")
    row.lines.append("}")
    row.lines.append(f"scf.yield {res2} : {out_t}")
    row.lines.append("}")
    return res


def _part_scan(row: _Row, n: int, out: str) -> str:
    """The lines scanning part ``%p`` of the group ``%xg`` into ``out``; its new value."""
    scalar, lanes = row.scalar, row.lanes
    sizes = _levels(n)
    source = ("%xg", row.group_t)
    withins = []
    for size in sizes[:-1]:
        blocks = -(-size // BLOCK)
        scratch_t = tensor_type([blocks * BLOCK, lanes], scalar)
        totals_t = tensor_type([blocks, lanes], scalar)
        scratch = row.add(f"tensor.empty() : {scratch_t}")
        totals = row.add(f"tensor.empty() : {totals_t}")
        edge = 0 if row.reverse else BLOCK - 1
        within, tots = _within_blocks(row, source, size, scratch, scratch_t, totals, totals_t,
                                      blocks, edge)
        withins.append((within, scratch_t, size, blocks))
        source = (tots, totals_t)
    top = sizes[-1]
    top_t = tensor_type([top, lanes], scalar)
    sums = _block_scan(row, source, top, False, "%c0", row.add(f"tensor.empty() : {top_t}"),
                       top_t, top)
    sums_t = top_t
    for level, (within, within_t, size, blocks) in reversed(list(enumerate(withins))):
        if level == 0:
            target, target_t = out, row.group_t
        else:
            target_t = tensor_type([size, lanes], scalar)
            target = row.add(f"tensor.empty() : {target_t}")
        sums = _spread(row, within, within_t, sums, sums_t, size, target, target_t, blocks)
        sums_t = target_t
    return sums


def row_lanes(shape: list[int], element: str, dim: int) -> int:
    """Rows scanned together (one a lane) for 32- or 64-bit elements: 8 (16
    lanes of f32 read c64 cumsum 512x1024 at 8.9 ms, 8 lanes at 1.8); 0 where
    the rows do not divide into groups of 8 (those keep the transposed copy)."""
    bits = {"f32": 32, "i32": 32, "f64": 64, "i64": 64}.get(element, 0)
    lanes = 8 if bits else 0
    rows = math.prod(shape[:dim])
    return lanes if lanes and rows % lanes == 0 else 0


def row_scan_text(name: str, shape: list[int], element: str, dim: int, op: str,
                  identity: str, reverse: bool) -> str:
    """``@name(%x, %init)``: the scan of ``%x`` along ``dim`` (the dims after it
    fewer than a block's elements), each group of rows read and written in
    place, one row a lane (`row_lanes`)."""
    rows, n, t = math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])
    lanes = row_lanes(shape, element, dim)
    full, flat = tensor_type(shape, element), tensor_type([rows, n, t], element)
    group_t = tensor_type([lanes, n, t], element)
    vector = f"vector<{lanes}x{element}>"
    row = _Row(vector, op, reverse, group_t, lanes, element)
    out = row.fresh("part")
    row.lines.append(f"{out} = scf.for %p = %c0 to {row.const(t)} step %c1 "
                     f"iter_args(%acc = %og0) -> ({group_t}) {{")
    result = _part_scan(row, n, "%acc")
    row.lines.append(f"scf.yield {result} : {group_t}")
    row.lines.append("}")
    body = "\n".join("      " + line for line in row.lines)
    return f"""func.func private @{name}(%x: {full}, %init: tensor<{element}>) -> {full} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %clanes = arith.constant {lanes} : index
  %pad = arith.constant {identity} : {element}
  %ident = arith.constant dense<{identity}> : {vector}
  %flat = stablehlo.reshape %x : ({full}) -> {flat}
  %o0 = tensor.empty() : {flat}
  %res = scf.forall (%g) in ({rows // lanes}) shared_outs(%o = %o0) -> ({flat}) {{
      %r = arith.muli %g, %clanes : index
      %xg = tensor.extract_slice %flat[%r, 0, 0] [{lanes}, {n}, {t}] [1, 1, 1] : {flat} to {group_t}
      %og0 = tensor.empty() : {group_t}
{body}
      scf.forall.in_parallel {{
        tensor.parallel_insert_slice {out} into %o[%r, 0, 0] [{lanes}, {n}, {t}] [1, 1, 1] : {group_t} into {flat}
      }}
  }}
  %back = stablehlo.reshape %res : ({flat}) -> {full}
  return %back : {full}
}}
"""
