"""The helper of a scatter of whole rows (segment sums, embedding bags) whose
indices are sorted or unique: chunks of the indices in parallel, no two on one row.

Row scatters put update row i into operand row ``ids[i]`` (a 1-d index per
update, the window the rest of the row). With ``indices_are_sorted``, the
updates of one row are neighbours, so the indices split into chunks at the
starts of runs of equal ids, and the chunks write disjoint ranges of rows:
each chunk owns the rows from its first id to its last, updates them in
order (a row's updates stay in cache between one and the next: no atomics,
nothing re-read from memory) and hands back its range. Each update row is
computed where it is used (scatter_updates.py). A row whose id is out of
bounds is skipped, as XLA does; so is one outside its chunk's range, which
only indices that lie about being sorted can give (their results are then
any order of the updates, as the spec allows, never a write elsewhere).

With ``unique_indices`` (and not sorted), no two updates share a row, so each
chunk of the updates owns the whole operand and writes its rows in place:
the chunks' rows are disjoint by the producer's promise. An out-of-bounds id
is skipped (StableHLO: the update is dropped, not clamped), so it writes
nothing; ids that lie about being unique may race on a row (undefined
behaviour in StableHLO) but never write outside the operand. The chunks'
whole-operand slices overlap, which tensors cannot check: one-shot
bufferization writes them in place and drops the self-copies
(test_scatter_unique.py's three chunks would lose rows to a copy-back).
"""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.helper_calls import tensor_type
from xlac.passes.lower.builders.scatter_region import Region, paste_region
from xlac.passes.lower.builders.scatter_text import ScatterDims
from xlac.passes.lower.builders.scatter_updates import UpdateRows

_CHUNK = 1024                 # indices per parallel task, at least
_MAX_TASKS = 256
_CHUNK_WORK = 1 << 16         # a unique-id task's row elements, at least: cpu/plans/chunks.py's
#                               CHUNK_WORK (below it the fork-join costs more than it saves)


def is_row_scatter(dims: ScatterDims, region: Region) -> bool:
    """One operand, one index per update row, the window the rest of the row."""
    n, rank = dims.updates_shape[0] if dims.updates_shape else 0, len(dims.operand_shape)
    return (len(dims.element_types) == 1 and region.elementwise and n > 0
            and dims.scatter_dims_to_operand_dims == (0,) and dims.inserted_window_dims == (0,)
            and not dims.input_batching_dims and dims.index_vector_dim == 1
            and dims.indices_shape in ((n,), (n, 1)) and not dims.index_type.startswith("ui")
            and dims.update_window_dims == tuple(range(1, rank))
            and dims.updates_shape == (n, *dims.operand_shape[1:]))


def sorted_rows_helper(name: str, dims: ScatterDims, region: Region, updates: ir.Value,
                       rows: UpdateRows) -> str:
    """``@name(operand, indices, leaves...)``: the scatter of sorted row indices."""
    return _SortedRows(name, dims, region, updates, rows).text()


def unique_rows_helper(name: str, dims: ScatterDims, region: Region, updates: ir.Value,
                       rows: UpdateRows) -> str:
    """``@name(operand, indices, leaves...)``: the scatter of unique row indices."""
    return _UniqueRows(name, dims, region, updates, rows).text()


class _SortedRows:
    """The helper's text, for one scatter."""

    def __init__(self, name: str, dims: ScatterDims, region: Region, updates: ir.Value,
                 rows: UpdateRows):
        self.name, self.dims, self.region, self.updates, self.rows = name, dims, region, updates, rows
        self.n, self.window = dims.updates_shape[0], list(dims.operand_shape[1:])
        element = dims.element_types[0]
        self.operand = tensor_type(dims.operand_shape, element)
        self.indices = tensor_type(dims.indices_shape, dims.index_type)
        self.owned = tensor_type([None, *self.window], element)
        self.row = tensor_type(self.window, element)
        self.tasks = max(1, min(_MAX_TASKS, math.ceil(self.n / _CHUNK)))
        self.leaves = [f"%leaf{k}" for k in range(len(rows.leaves))]
        self.id_suffix = ", %c0" if len(dims.indices_shape) == 2 else ""

    def text(self) -> str:
        params = ", ".join([f"%in0: {self.operand}", f"%idx: {self.indices}"]
                           + [f"{leaf}: {value.type}" for leaf, value in zip(self.leaves, self.rows.leaves)])
        return f"""func.func private @{self.name}({params}) -> {self.operand} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {self.n} : index
  %last_row = arith.constant {self.dims.operand_shape[0] - 1} : index
  %chunk = arith.constant {math.ceil(self.n / self.tasks)} : index
  %r = scf.forall (%task) in ({self.tasks}) shared_outs(%out = %in0) -> ({self.operand}) {{
{self._owned_rows()}{self._update_loop()}\
    scf.forall.in_parallel {{
      tensor.parallel_insert_slice %done into %out{self._slice('%offset', '%size')} : {self.owned} into {self.operand}
    }}
  }}
  return %r : {self.operand}
}}
{self._run_start()}"""

    def _slice(self, offset: str, size: str) -> str:
        offsets = ", ".join([offset] + ["0"] * len(self.window))
        sizes = ", ".join([size, *map(str, self.window)])
        return f"[{offsets}] [{sizes}] [{', '.join('1' for _ in range(len(self.window) + 1))}]"

    def _id(self, target: str, position: str, indent: str) -> str:
        """Lines binding ``target`` (an index) to the id at ``position``."""
        return (f"{indent}{target}_raw = tensor.extract %idx[{position}{self.id_suffix}] : {self.indices}\n"
                f"{indent}{target} = arith.index_cast {target}_raw : {self.dims.index_type} to index\n")

    def _owned_rows(self) -> str:
        """This task's indices [%lo, %hi) (whole runs), and the rows they own as %mine."""
        signature = f"({self.indices}, index) -> index"
        return f"""    %from = arith.muli %task, %chunk : index
    %to_unclamped = arith.addi %from, %chunk : index
    %to = arith.minui %to_unclamped, %n : index
    %lo = func.call @{self.name}_run_start(%idx, %from) : {signature}
    %hi = func.call @{self.name}_run_start(%idx, %to) : {signature}
    %any = arith.cmpi ult, %lo, %hi : index
    %hi_minus_1 = arith.subi %hi, %c1 : index
    %first_at = arith.select %any, %lo, %c0 : index
    %last_at = arith.select %any, %hi_minus_1, %c0 : index
{self._id("%first_id", "%first_at", "    ")}{self._id("%last_id", "%last_at", "    ")}\
    %first = arith.maxsi %first_id, %c0 : index
    %last = arith.minsi %last_id, %last_row : index
    %ordered = arith.cmpi sle, %first, %last : index
    %owns = arith.andi %any, %ordered : i1
    %span_minus_1 = arith.subi %last, %first : index
    %span = arith.addi %span_minus_1, %c1 : index
    %size = arith.select %owns, %span, %c0 : index
    %offset = arith.select %owns, %first, %c0 : index
    %end = arith.addi %offset, %size : index
    %mine = tensor.extract_slice %out{self._slice('%offset', '%size')} : {self.operand} to {self.owned}
"""

    def _update_loop(self) -> str:
        """Each index of the task in order: its update row combined into its row."""
        update_lines, update = self.rows.text(self.updates, "%i", self.leaves)
        combine_lines, combined = paste_region(self.region, ["%old", update], self.window)
        body = "".join(f"        {line}\n" for line in [*update_lines, *combine_lines])
        owned, row, at = self.owned, self.row, self._slice("%at", "1")
        return f"""{self._loop_head()}\
      %above = arith.cmpi sge, %row, %offset : index
      %below = arith.cmpi slt, %row, %end : index
      %in_range = arith.andi %above, %below : i1
      %owned_row = arith.andi %in_range, %counted : i1
      %next = scf.if %owned_row -> ({owned}) {{
        %at = arith.subi %row, %offset : index
        %old = tensor.extract_slice %acc{at} : {owned} to {row}
{body}\
        %put = tensor.insert_slice {combined[0]} into %acc{at} : {row} into {owned}
        scf.yield %put : {owned}
      }} else {{
        scf.yield %acc : {owned}
      }}
      scf.yield %next : {owned}
    }}
"""

    def _loop_head(self) -> str:
        """The loop over the task's indices [%lo, %hi): ``%i``, its ``%row`` and
        ``%counted`` (whether %i is one of them: always here)."""
        return f"""    %done = scf.for %i = %lo to %hi step %c1 iter_args(%acc = %mine) -> ({self.owned}) {{
{self._id("%row", "%i", "      ")}\
      %counted = arith.constant true
"""

    def _run_start(self) -> str:
        """``@name_run_start(%idx, %p)``: the first i >= p that starts a run of equal ids (or n)."""
        indices, suffix = self.indices, self.id_suffix
        return f"""func.func private @{self.name}_run_start(%idx: {indices}, %p: index) -> index {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {self.n} : index
  %start = scf.while (%i = %p) : (index) -> index {{
    %after_first = arith.cmpi ugt, %i, %c0 : index
    %before_end = arith.cmpi ult, %i, %n : index
    %inside = arith.andi %after_first, %before_end : i1
    %same = scf.if %inside -> (i1) {{
      %i_minus_1 = arith.subi %i, %c1 : index
      %previous = tensor.extract %idx[%i_minus_1{suffix}] : {indices}
      %current = tensor.extract %idx[%i{suffix}] : {indices}
      %equal = arith.cmpi eq, %previous, %current : {self.dims.index_type}
      scf.yield %equal : i1
    }} else {{
      %no = arith.constant false
      scf.yield %no : i1
    }}
    scf.condition(%same) %i : index
  }} do {{
  ^bb0(%i: index):
    %next = arith.addi %i, %c1 : index
    scf.yield %next : index
  }}
  return %start : index
}}
"""


class _UniqueRows(_SortedRows):
    """Unique ids: each task takes a plain chunk of the indices and owns every row
    (its rows are its own by uniqueness); no run starts to look for."""

    def __init__(self, *args):
        super().__init__(*args)
        per_task = max(_CHUNK, math.ceil(_CHUNK_WORK / max(1, math.prod(self.window))))
        self.tasks = max(1, min(_MAX_TASKS, math.ceil(self.n / per_task)))

    def _owned_rows(self) -> str:
        return f"""    %from = arith.muli %task, %chunk : index
    %offset = arith.constant 0 : index
    %size = arith.constant {self.dims.operand_shape[0]} : index
    %end = arith.addi %offset, %size : index
    %mine = tensor.extract_slice %out{self._slice('%offset', '%size')} : {self.operand} to {self.owned}
"""

    def _loop_head(self) -> str:
        """A static trip count (the chunk), so that the schedules see the row op's
        real work (loop_trips.py) and vectorize it; the last chunk's steps past
        the end are not counted (their id read at n - 1, then ignored)."""
        return f"""    %done = scf.for %k = %c0 to %chunk step %c1 iter_args(%acc = %mine) -> ({self.owned}) {{
      %i = arith.addi %from, %k : index
      %counted = arith.cmpi ult, %i, %n : index
      %n_minus_1 = arith.subi %n, %c1 : index
      %i_read = arith.minui %i, %n_minus_1 : index
{self._id("%row", "%i_read", "      ")}"""

    def _run_start(self) -> str:
        return ""
