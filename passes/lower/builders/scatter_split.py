"""A scatter whose windows span the operand's whole leading dim, one operand row
at a time: ``x.at[:, cols].add(v)``, ``x.at[:, cols].set(v)`` (columns of a
matrix), ``x.at[:, i, j].add(v)``.

The one-window-at-a-time loop (scatter_text.py) walks such a scatter column by
column: each update window is a column of the operand and of the updates,
4,096 strided elements for a 4096x256 operand, every cache line of both read
once per index. Operand row r takes only the updates' row r, though, and in
the same order: so the helper loops over the operand's rows (in parallel
chunks, which own disjoint rows: no atomics, whatever the indices) and runs the
scatter of that row, `@name_row`, the window loop of scatter_text.py on the
row's slices. Each element still gets its updates in index order (XLA's order
for repeated indices), and an out-of-bounds window is dropped in every row,
as whole: its check never reads the leading dim, which always fits. No flag is
needed; sorted or unique indices change nothing here.
"""

from __future__ import annotations

import math

from xlac import record
from xlac.passes.helper_calls import tensor_type
from xlac.passes.lower.builders.scatter_region import Region
from xlac.passes.lower.builders.scatter_text import ScatterDims, helper_function

_CHUNK_WORK = 1 << 16        # update elements a task, at least (cpu/plans/chunks.py's CHUNK_WORK)
_MAX_TASKS = 256


def is_leading_window_scatter(dims: ScatterDims) -> bool:
    """One operand of rank 2 or more whose leading dim (more than one row) is a
    window dim the windows cover whole; signed indices."""
    operand, window_dims = dims.operand_shape, dims.operand_window_dims()
    return (len(dims.element_types) == 1 and len(operand) >= 2 and operand[0] > 1
            and window_dims[:1] == [0] and 0 not in dims.scatter_dims_to_operand_dims
            and dims.window_size(0) == operand[0] and not dims.index_type.startswith("ui")
            and math.prod(dims.updates_shape) > 0)


def row_dims(dims: ScatterDims) -> ScatterDims:
    """The scatter of one operand row: the leading dim and its update dim gone."""
    gone = dims.update_window_dims[0]

    def update_dim(d: int) -> int:
        return d - (d > gone)

    return record.replace(
        dims, operand_shape=dims.operand_shape[1:],
        updates_shape=tuple(n for d, n in enumerate(dims.updates_shape) if d != gone),
        update_window_dims=tuple(update_dim(d) for d in dims.update_window_dims[1:]),
        inserted_window_dims=tuple(d - 1 for d in dims.inserted_window_dims),
        input_batching_dims=tuple(d - 1 for d in dims.input_batching_dims),
        scatter_dims_to_operand_dims=tuple(d - 1 for d in dims.scatter_dims_to_operand_dims))


def split_rows_helper(name: str, dims: ScatterDims, region: Region) -> str:
    """``@name(operand, indices, updates)``: chunks of rows, each row's scatter in turn."""
    rows, rest, element = dims.operand_shape[0], list(dims.operand_shape[1:]), dims.element_types[0]
    tasks = _tasks(rows, math.prod(dims.updates_shape))
    chunk = rows // tasks
    operand, indices = tensor_type(dims.operand_shape, element), tensor_type(dims.indices_shape, dims.index_type)
    updates, row = tensor_type(dims.updates_shape, element), tensor_type(rest, element)
    row_updates = tensor_type(row_dims(dims).updates_shape, element)
    owned = tensor_type([chunk, *rest], element)
    zeros, ones = ", 0" * len(rest), ", 1" * len(rest)
    sizes = "".join(f", {n}" for n in rest)
    gone = dims.update_window_dims[0]
    update_at = ", ".join("%at" if d == gone else "0" for d in range(len(dims.updates_shape)))
    update_sizes = ", ".join("1" if d == gone else str(n) for d, n in enumerate(dims.updates_shape))
    update_ones = ", ".join("1" for _ in dims.updates_shape)
    return f"""func.func private @{name}(%in0: {operand}, %idx: {indices}, %up0: {updates}) -> {operand} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %chunk = arith.constant {chunk} : index
  %r = scf.forall (%task) in ({tasks}) shared_outs(%out = %in0) -> ({operand}) {{
    %from = arith.muli %task, %chunk : index
    %mine = tensor.extract_slice %out[%from{zeros}] [{chunk}{sizes}] [1{ones}] : {operand} to {owned}
    %done = scf.for %k = %c0 to %chunk step %c1 iter_args(%acc = %mine) -> ({owned}) {{
      %at = arith.addi %from, %k : index
      %x = tensor.extract_slice %acc[%k{zeros}] [1{sizes}] [1{ones}] : {owned} to {row}
      %u = tensor.extract_slice %up0[{update_at}] [{update_sizes}] [{update_ones}] : {updates} to {row_updates}
      %y = func.call @{name}_row(%x, %idx, %u) : ({row}, {indices}, {row_updates}) -> {row}
      %put = tensor.insert_slice %y into %acc[%k{zeros}] [1{sizes}] [1{ones}] : {row} into {owned}
      scf.yield %put : {owned}
    }}
    scf.forall.in_parallel {{
      tensor.parallel_insert_slice %done into %out[%from{zeros}] [{chunk}{sizes}] [1{ones}] : {owned} into {operand}
    }}
  }}
  return %r : {operand}
}}
{helper_function(f"{name}_row", row_dims(dims), region)}"""


def _tasks(rows: int, work: int) -> int:
    """Chunks of at least _CHUNK_WORK update elements, as many as divide the rows
    evenly (static sizes: the schedules see every loop's trip count)."""
    wanted = max(1, min(_MAX_TASKS, rows, work // _CHUNK_WORK))
    return next(t for t in range(wanted, 0, -1) if rows % t == 0)
