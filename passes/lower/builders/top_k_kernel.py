"""MLIR text of the top-k helper that xla-lower-top-k defines.

Each row (the last dim; rows in parallel) is read once, in order, against a
buffer of the keys of the k best elements so far, best first (keys: see
top_k_keys.py). The first k elements fill it; after that the row goes by in
blocks of 16: their keys, as one vector, are compared with the buffer's last
(the k-th best), and only a block with a better element is looked at one
element at a time. A better element walks up from the last slot past the
worse keys it shifts down (on random data, one or two), so the buffer stays
sorted. Equal keys keep the earlier element first, as the stable sort does.
On long rows a floor under the k-th best is found first (top_k_threshold.py)
and an element must beat it too: an ascending row, where every element beats
the k-th best so far, then inserts ~2k elements instead of n.
"""

from __future__ import annotations

import math

from xlac.dtypes import tensor_type
from xlac.passes.lower.builders import top_k_threshold
from xlac.passes.lower.builders.top_k_keys import BITS, TopKOrder, key_lines, key_type, supported

__all__ = ["TopKOrder", "declaration_attributes", "helper_text", "order_of", "supported"]

# What marks a private declaration as a top-k for xla-lower-top-k to define.
TOP_K_ATTR = "xla.top_k"                  # k : i64
_SMALLEST_ATTR = "xla.top_k_smallest"     # unit: TopKOrder.smallest
_CANONICAL_ATTR = "xla.top_k_canonical"   # unit: TopKOrder.canonical


def declaration_attributes(k: int, order: TopKOrder) -> str:
    """The attribute dictionary's text for a top-k declaration."""
    marks = [f"{TOP_K_ATTR} = {k} : i64"]
    marks += [_SMALLEST_ATTR] if order.smallest else []
    marks += [_CANONICAL_ATTR] if order.canonical else []
    return "{" + ", ".join(marks) + "}"


def order_of(attributes) -> TopKOrder:
    """The order a top-k declaration's attributes ask for."""
    return TopKOrder(smallest=_SMALLEST_ATTR in attributes, canonical=_CANONICAL_ATTR in attributes)


def helper_text(name: str, shape: list[int], element: str, k: int, index: str,
                order: TopKOrder | None = None, counted_from: int = 0) -> str:
    """``@name(%x) -> (values, indices)`` over the last dim of ``shape``; from
    k = ``counted_from`` on (0: never) with the counted insert."""
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
    kernel = _Kernel(name, rows, n, k, element, index, order or TopKOrder(),
                     counted=0 < counted_from <= k)
    return "\n".join([
        f"func.func private @{name}(%x: {full}) -> ({out_v}, {out_i}) {{",
        collapse,
        f"  %r:2 = call @{name}_rows(%x2) : ({flat}) -> ({flat_v}, {flat_i})",
        *expand,
        f"  return %v, %i : {out_v}, {out_i}",
        "}",
        kernel.rows(), kernel.consider(), kernel.insert(),
    ]) + "\n"


class _Kernel:
    """The row kernel and the two functions it calls, for one shape and order."""

    def __init__(self, name: str, rows: int, n: int, k: int, element: str, index: str,
                 order: TopKOrder, counted: bool = False):
        self.name, self.rows_count, self.n, self.k = name, rows, n, k
        self.element, self.index, self.order = element, index, order
        self.key = key_type(element)
        self.lanes = 8 if BITS[element] == 64 else 16
        self.flat = tensor_type([rows, n], element)
        self.counted = counted
        # the counted insert reads and writes whole vectors: room for one past the k slots
        size = (k + self.lanes - 1) // self.lanes * self.lanes + self.lanes if self.counted else k
        self.keys, self.slots = f"tensor<{size}x{self.key}>", f"tensor<{size}xindex>"
        self.buffers = f"{self.keys}, {self.slots}"
        self.block_end = k + (n - k) // self.lanes * self.lanes
        # a floor under the k-th best (top_k_threshold.py): %floor in the row's loop
        self.floored = top_k_threshold.wanted(k, n, self.lanes)

    def _floor_lines(self) -> str:
        if not self.floored:
            return ""
        return top_k_threshold.floor_lines("%x", self.flat, self.element, self.order, self.k,
                                           self.n, self.lanes)

    def _bar(self, worst: str, indent: str) -> tuple[str, str]:
        """The line of ``max(worst, %floor)``, what a key must beat to enter,
        and its name (``worst`` itself without a floor)."""
        if not self.floored:
            return "", worst
        return f"{indent}%bar_key = arith.maxsi {worst}, %floor : {self.key}\n", "%bar_key"

    def _scalar_key(self, value: str, indent: str) -> tuple[str, str]:
        """The lines computing ``value``'s key (none for a plain integer), its name."""
        lines, key = key_lines(self.element, value, self.order)
        return "".join(f"{indent}{line}\n" for line in lines), key

    def _insert_call(self, keys: str, slots: str, key: str, j: str, free: str) -> str:
        return (f"func.call @{self.name}_insert({keys}, {slots}, {key}, {j}, {free}) : "
                f"({self.buffers}, {self.key}, index, index) -> ({self.buffers})")

    def _consider_call(self, j: str, keys: str, slots: str) -> str:
        floor, floor_type = (", %floor", f", {self.key}") if self.floored else ("", "")
        return (f"func.call @{self.name}_consider(%x, %row, {j}, {keys}, {slots}{floor}) : "
                f"({self.flat}, index, index, {self.buffers}{floor_type}) -> ({self.buffers})")

    def rows(self) -> str:
        """Each row: fill the buffer, skim the blocks, finish the tail, write out."""
        k = self.k
        flat_v = tensor_type([self.rows_count, k], self.element)
        flat_i = tensor_type([self.rows_count, k], self.index)
        fill_key_lines, fill_key = self._scalar_key("%e", "      ")
        outs = f"shared_outs(%ov = %ov0, %oi = %oi0) -> ({flat_v}, {flat_i})"
        floor = self._floor_lines()
        return f"""func.func private @{self.name}_rows(%x: {self.flat}) -> ({flat_v}, {flat_i}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {self.n} : index
  %kk = arith.constant {k} : index
  %last = arith.constant {k - 1} : index
  %lanes = arith.constant {self.lanes} : index
  %block_end = arith.constant {self.block_end} : index
  %pad = {_zero(self.element)}
  %ov0 = tensor.empty() : {flat_v}
  %oi0 = tensor.empty() : {flat_i}
  %res:2 = scf.forall (%row) in ({self.rows_count}) {outs} {{
{self._empty_buffers()}
{floor}    %filled:2 = scf.for %j = %c0 to %kk step %c1 iter_args(%kb = %kb0, %ib = %ib0) -> ({self.buffers}) {{
      %e = tensor.extract %x[%row, %j] : {self.flat}
{fill_key_lines}      %put:2 = {self._insert_call("%kb", "%ib", fill_key, "%j", "%j")}
      scf.yield %put#0, %put#1 : {self.buffers}
    }}
{self._skim()}
    %buf:2 = scf.for %j = %block_end to %n step %c1 iter_args(%kb = %skimmed#0, %ib = %skimmed#1) -> ({self.buffers}) {{
      %r:2 = {self._consider_call("%j", "%kb", "%ib")}
      scf.yield %r#0, %r#1 : {self.buffers}
    }}
{self._write_out(flat_v, flat_i)}
  }}
  return %res#0, %res#1 : {flat_v}, {flat_i}
}}"""

    def _empty_buffers(self) -> str:
        """%kb0, %ib0: the counted insert's whole-vector reads see zeros past the slots filled."""
        lines = [f"    %kb0 = tensor.empty() : {self.keys}", f"    %ib0 = tensor.empty() : {self.slots}"]
        if not self.counted:
            return "\n".join(lines)
        return "\n".join([line.replace("%kb0", "%kb00").replace("%ib0", "%ib00") for line in lines] + [
            f"    %zero_key = arith.constant 0 : {self.key}",
            f"    %kb0 = linalg.fill ins(%zero_key : {self.key}) outs(%kb00 : {self.keys}) -> {self.keys}",
            f"    %ib0 = linalg.fill ins(%c0 : index) outs(%ib00 : {self.slots}) -> {self.slots}"])

    def _skim(self) -> str:
        """The blocks after the first k: only one with a better key is read element by element."""
        lanes, buffers = self.lanes, self.buffers
        keys = f"vector<{lanes}x{self.key}>"
        lines, block_key = key_lines(self.element, "%block", self.order, lanes, "b")
        block_key_lines = "".join(f"      {line}\n" for line in lines)
        carried = f"iter_args(%kb = %filled#0, %ib = %filled#1) -> ({buffers})"
        read = f"{{in_bounds = [true]}} : {self.flat}, vector<{lanes}x{self.element}>"
        bar_line, bar_key = self._bar("%worst", "      ")
        return f"""    %skimmed:2 = scf.for %j = %kk to %block_end step %lanes {carried} {{
      %block = vector.transfer_read %x[%row, %j], %pad {read}
{block_key_lines}      %worst = tensor.extract %kb[%last] : {self.keys}
{bar_line}      %bar = vector.broadcast {bar_key} : {self.key} to {keys}
      %better = arith.cmpi sgt, {block_key}, %bar : {keys}
      %any = vector.reduction <or>, %better : vector<{lanes}xi1> into i1
      %next:2 = scf.if %any -> ({buffers}) {{
        %each:2 = scf.for %q = %c0 to %lanes step %c1 iter_args(%kq = %kb, %iq = %ib) -> ({buffers}) {{
          %jq = arith.addi %j, %q : index
          %r:2 = {self._consider_call("%jq", "%kq", "%iq")}
          scf.yield %r#0, %r#1 : {buffers}
        }}
        scf.yield %each#0, %each#1 : {buffers}
      }} else {{
        scf.yield %kb, %ib : {buffers}
      }}
      scf.yield %next#0, %next#1 : {buffers}
    }}"""

    def _write_out(self, flat_v: str, flat_i: str) -> str:
        """The buffer's elements, best first, into the row's slice of the results."""
        k = self.k
        row_v, row_i = tensor_type([1, k], self.element), tensor_type([1, k], self.index)
        return f"""    %rv0 = tensor.empty() : {row_v}
    %ri0 = tensor.empty() : {row_i}
    %out:2 = scf.for %q = %c0 to %kk step %c1 iter_args(%rv = %rv0, %ri = %ri0) -> ({row_v}, {row_i}) {{
      %src = tensor.extract %buf#1[%q] : {self.slots}
      %value = tensor.extract %x[%row, %src] : {self.flat}
      %pos = arith.index_cast %src : index to {self.index}
      %rv1 = tensor.insert %value into %rv[%c0, %q] : {row_v}
      %ri1 = tensor.insert %pos into %ri[%c0, %q] : {row_i}
      scf.yield %rv1, %ri1 : {row_v}, {row_i}
    }}
    scf.forall.in_parallel {{
      tensor.parallel_insert_slice %out#0 into %ov[%row, 0] [1, {k}] [1, 1] : {row_v} into {flat_v}
      tensor.parallel_insert_slice %out#1 into %oi[%row, 0] [1, {k}] [1, 1] : {row_i} into {flat_i}
    }}"""

    def consider(self) -> str:
        """Element j of the row, into a full buffer if it beats the k-th best."""
        key_text, key = self._scalar_key("%e", "  ")
        buffers = self.buffers
        params = f"%x: {self.flat}, %row: index, %j: index, %kb: {self.keys}, %ib: {self.slots}"
        params += f", %floor: {self.key}" if self.floored else ""
        bar_line, bar_key = self._bar("%worst", "  ")
        return f"""func.func private @{self.name}_consider({params}) -> ({buffers}) {{
  %last = arith.constant {self.k - 1} : index
  %e = tensor.extract %x[%row, %j] : {self.flat}
{key_text}  %worst = tensor.extract %kb[%last] : {self.keys}
{bar_line}  %better = arith.cmpi sgt, {key}, {bar_key} : {self.key}
  %r:2 = scf.if %better -> ({buffers}) {{
    %put:2 = {self._insert_call("%kb", "%ib", key, "%j", "%last")}
    scf.yield %put#0, %put#1 : {buffers}
  }} else {{
    scf.yield %kb, %ib : {buffers}
  }}
  return %r#0, %r#1 : {buffers}
}}"""

    def insert(self) -> str:
        return self._counted_insert() if self.counted else self._walking_insert()

    def _counted_insert(self) -> str:
        """Key ``%key`` of element ``%j`` into the buffer's first ``%free`` slots,
        sorted: its slot is the count of keys at least as good (vector compares
        of ``lanes`` keys, no branch), the worse keys below it move down one,
        ``lanes`` at a time from the last (the moved lanes selected into the
        vector there, stored whole: the buffers have room past k; a masked
        store measured slower), the one in ``%free`` drops out. The same
        buffer as the walk's, for ~k / 16 vector compares and moves instead
        of a branch per key it passes (on random rows ~k / 2, ascending k)."""
        keys, slots, buffers, lanes = self.keys, self.slots, self.buffers, self.lanes
        key_vector, counts = f"vector<{lanes}x{self.key}>", f"vector<{lanes}xi32>"
        params = f"%kb: {keys}, %ib: {slots}, %key: {self.key}, %j: index, %free: index"
        return f"""func.func private @{self.name}_insert({params}) -> ({buffers}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %lanes = arith.constant {lanes} : index
  %pad = arith.constant 0 : {self.key}
  %zeros = arith.constant dense<0> : {counts}
  %bar = vector.broadcast %key : {self.key} to {key_vector}
  %sums = scf.for %q = %c0 to %free step %lanes iter_args(%acc = %zeros) -> ({counts}) {{
    %left = arith.subi %free, %q : index
    %live = vector.create_mask %left : vector<{lanes}xi1>
    %block = vector.transfer_read %kb[%q], %pad {{in_bounds = [true]}} : {keys}, {key_vector}
    %ge = arith.cmpi sge, %block, %bar : {key_vector}
    %counted = arith.andi %ge, %live : vector<{lanes}xi1>
    %ones = arith.extui %counted : vector<{lanes}xi1> to {counts}
    %acc1 = arith.addi %acc, %ones : {counts}
    scf.yield %acc1 : {counts}
  }}
  %sum = vector.reduction <add>, %sums : {counts} into i32
  %slot = arith.index_cast %sum : i32 to index
  %moves = arith.subi %free, %slot : index
  %shifted:2 = scf.for %t = %c0 to %moves step %lanes iter_args(%kw = %kb, %iw = %ib) -> ({buffers}) {{
    %hi = arith.subi %free, %t : index
    %low = arith.subi %hi, %lanes : index
    %base = arith.maxsi %low, %slot : index
    %count = arith.subi %hi, %base : index
    %moved = vector.create_mask %count : vector<{lanes}xi1>
    %to = arith.addi %base, %c1 : index
    %moved_keys = vector.transfer_read %kw[%base], %pad {{in_bounds = [true]}} : {keys}, {key_vector}
    %moved_slots = vector.transfer_read %iw[%base], %c0 {{in_bounds = [true]}} : {slots}, vector<{lanes}xindex>
    %kept_keys = vector.transfer_read %kw[%to], %pad {{in_bounds = [true]}} : {keys}, {key_vector}
    %kept_slots = vector.transfer_read %iw[%to], %c0 {{in_bounds = [true]}} : {slots}, vector<{lanes}xindex>
    %new_keys = arith.select %moved, %moved_keys, %kept_keys : vector<{lanes}xi1>, {key_vector}
    %new_slots = arith.select %moved, %moved_slots, %kept_slots : vector<{lanes}xi1>, vector<{lanes}xindex>
    %kw1 = vector.transfer_write %new_keys, %kw[%to] {{in_bounds = [true]}} : {key_vector}, {keys}
    %iw1 = vector.transfer_write %new_slots, %iw[%to] {{in_bounds = [true]}} : vector<{lanes}xindex>, {slots}
    scf.yield %kw1, %iw1 : {buffers}
  }}
  %kb1 = tensor.insert %key into %shifted#0[%slot] : {keys}
  %ib1 = tensor.insert %j into %shifted#1[%slot] : {slots}
  return %kb1, %ib1 : {buffers}
}}"""

    def _walking_insert(self) -> str:
        """Key ``%key`` of element ``%j`` into slot ``%free`` (the count while
        filling, else the last, whose element drops out), then up past every
        smaller key; an equal key stays above it (it came first)."""
        keys, slots, buffers = self.keys, self.slots, self.buffers
        params = f"%kb: {keys}, %ib: {slots}, %key: {self.key}, %j: index, %free: index"
        return f"""func.func private @{self.name}_insert({params}) -> ({buffers}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %w:3 = scf.while (%q = %free, %kw = %kb, %iw = %ib) : (index, {buffers}) -> (index, {buffers}) {{
    %more = arith.cmpi ugt, %q, %c0 : index
    %go = scf.if %more -> (i1) {{
      %above = arith.subi %q, %c1 : index
      %other = tensor.extract %kw[%above] : {keys}
      %worse = arith.cmpi slt, %other, %key : {self.key}
      scf.yield %worse : i1
    }} else {{
      %stop = arith.constant false
      scf.yield %stop : i1
    }}
    scf.condition(%go) %q, %kw, %iw : index, {buffers}
  }} do {{
  ^bb0(%q: index, %kw: {keys}, %iw: {slots}):
    %above = arith.subi %q, %c1 : index
    %moved_key = tensor.extract %kw[%above] : {keys}
    %moved_slot = tensor.extract %iw[%above] : {slots}
    %kw1 = tensor.insert %moved_key into %kw[%q] : {keys}
    %iw1 = tensor.insert %moved_slot into %iw[%q] : {slots}
    scf.yield %above, %kw1, %iw1 : index, {buffers}
  }}
  %kb1 = tensor.insert %key into %w#1[%w#0] : {keys}
  %ib1 = tensor.insert %j into %w#2[%w#0] : {slots}
  return %kb1, %ib1 : {buffers}
}}"""


def _zero(element: str) -> str:
    literal = "0.0" if element.startswith(("f", "bf")) else "0"
    return f"arith.constant {literal} : {element}"
