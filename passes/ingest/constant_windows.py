"""The update windows of a scatter or dynamic_update_slice whose start indices
are constants: where each lies in the operand, and what it writes there.

xla-constant-scatters-as-selects' analysis: each window as a box of the
operand (a start and a size per operand dim) and the value that fills it,
either one element (a 0-d tensor: a splat or a broadcast scalar) or the
window's own elements, which only a box whose every dim is 1 or the
operand's whole extent can read without a shifted index (a broadcast).
"""

from __future__ import annotations

import itertools
import math

from xlac.mlir import ir, stablehlo
from xlac.record import record

# Index tuples of one scatter at most: each is a compare (per constrained dim)
# and a select per element of every kernel the select form fuses into.
MAX_WINDOWS = 4


@record
class Window:
    """One update: the box ``starts`` .. ``starts + sizes`` of the operand, filled
    from ``scalar`` (a 0-d tensor) or, when that is None, from the updates at
    ``position`` (a slice of the updates' scatter dims; () for the whole of them).
    ``scalar`` is a 0-d tensor, or the element of a splat constant (an attribute)."""

    starts: tuple[int, ...]
    sizes: tuple[int, ...]
    scalar: ir.Value | ir.Attribute | None
    position: tuple[int, ...]


@record
class Updates:
    """All of one op's windows, in the order they apply, and where the window
    dims of ``source`` (the updates tensor) land among the operand's dims."""

    windows: tuple[Window, ...]          # in bounds only: XLA drops the others whole
    source: ir.Value
    scatter_dims: tuple[int, ...]        # the updates' dims that pick a window
    window_dims: tuple[int, ...]         # operand dims the updates' window dims fill, in order


def defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def constant_array(value: ir.Value):
    """The integers ``value`` holds as a numpy array (row-major), if it is a
    constant or a reshape/broadcast_in_dim of one; else None."""
    import numpy as np
    op = defining_op(value)
    if op is None:
        return None
    shape = tuple(ir.RankedTensorType(value.type).shape)
    if op.name == "stablehlo.constant":
        try:
            elements = ir.DenseIntElementsAttr(op.attributes["value"])
        except ValueError:
            return None
        unsigned = str(ir.RankedTensorType(value.type).element_type).startswith("ui")
        width = ir.IntegerType(ir.RankedTensorType(value.type).element_type).width

        def read(v: int) -> int:
            return v + (1 << width) if unsigned and v < 0 else v
        if elements.is_splat:
            return np.full(shape, read(int(elements.get_splat_value().value)), dtype=object)
        return np.array([read(int(elements[i])) for i in range(math.prod(shape))],
                        dtype=object).reshape(shape)
    if op.name not in ("stablehlo.reshape", "stablehlo.broadcast_in_dim"):
        return None
    source = constant_array(op.operands[0])
    if source is None:
        return None
    if op.name == "stablehlo.reshape":
        return source.reshape(shape)
    dims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
    expanded = source.reshape([source.shape[dims.index(d)] if d in dims else 1
                               for d in range(len(shape))]) if dims == sorted(dims) else None
    return None if expanded is None else np.broadcast_to(expanded, shape)


def scalar_of(value: ir.Value) -> ir.Value | ir.Attribute | None:
    """The 0-d tensor every element of ``value`` equals, when it is one or a
    broadcast of one; a splat constant's element (an attribute); else None."""
    if ir.RankedTensorType(value.type).rank == 0:
        return value
    op = defining_op(value)
    if op is None:
        return None
    if op.name == "stablehlo.broadcast_in_dim":
        return scalar_of(op.operands[0])
    if op.name == "stablehlo.constant":
        attr = ir.DenseElementsAttr(op.attributes["value"])
        return attr.get_splat_value() if attr.is_splat else None
    return None


def _readable(operand_shape, starts, sizes, scalar) -> bool:
    """A window of its own elements needs each dim whole or of size 1."""
    return scalar is not None or all(size in (1, whole) for size, whole in zip(sizes, operand_shape))


def scatter_updates(op: ir.Operation) -> Updates | None:
    """A one-operand `stablehlo.scatter` with constant indices, no batching dims
    and at most MAX_WINDOWS index tuples, as its windows; else None."""
    import numpy as np
    if len(op.results) != 1 or len(op.operands) != 3:
        return None
    operand, indices, updates = op.operands
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    if not all(t.has_static_shape for t in types):
        return None
    ids = constant_array(indices)
    numbers = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    if ids is None or list(numbers.input_batching_dims):
        return None
    shape = tuple(types[0].shape)
    if not shape or 0 in shape or ids.size == 0:
        return None
    vector_dim = numbers.index_vector_dim
    if vector_dim == ids.ndim:
        ids = ids.reshape(ids.shape + (1,))
    ids = np.moveaxis(ids, vector_dim, -1).reshape(-1, ids.shape[vector_dim])
    if not 1 <= len(ids) <= MAX_WINDOWS:
        return None
    window_dims = [d for d in range(len(shape)) if d not in numbers.inserted_window_dims]
    update_shape = list(types[2].shape)
    sizes = [1] * len(shape)
    for d, u in zip(window_dims, numbers.update_window_dims):
        sizes[d] = update_shape[u]
    if 0 in sizes:
        return None
    scatter_dims = [d for d in range(len(update_shape)) if d not in numbers.update_window_dims]
    batch_shape = [update_shape[d] for d in scatter_dims]
    positions = list(itertools.product(*[range(n) for n in batch_shape]))
    if len(positions) != len(ids):
        return None
    scalar = scalar_of(updates)
    windows = []
    for position, vector in zip(positions, ids):
        starts = [0] * len(shape)
        for k, d in enumerate(numbers.scattered_dims_to_operand_dims):
            starts[d] = int(vector[k])
        if not _readable(shape, starts, sizes, scalar):
            return None
        if all(0 <= s <= n - w for s, n, w in zip(starts, shape, sizes)):
            windows.append(Window(tuple(starts), tuple(sizes), scalar, position))
    return Updates(tuple(windows), updates, tuple(scatter_dims), tuple(window_dims))


def update_slice_updates(op: ir.Operation) -> Updates | None:
    """A `stablehlo.dynamic_update_slice` with constant starts as its one
    window, the starts clamped into the operand as the op does; else None."""
    operand, update, *starts = op.operands
    types = [ir.RankedTensorType(v.type) for v in (operand, update)]
    if not all(t.has_static_shape for t in types) or types[0].rank == 0 or 0 in types[0].shape \
            or 0 in types[1].shape:
        return None
    values = [constant_array(s) for s in starts]
    if any(v is None for v in values):
        return None
    shape, sizes = tuple(types[0].shape), tuple(types[1].shape)
    clamped = tuple(min(max(int(v.reshape(-1)[0]), 0), n - w)
                    for v, n, w in zip(values, shape, sizes))
    scalar = scalar_of(update)
    if not _readable(shape, clamped, sizes, scalar):
        return None
    return Updates((Window(clamped, sizes, scalar, ()),), update, (), tuple(range(len(shape))))
