"""xla-diagonal-gathers: jnp.diagonal's gather of (i + a, i + c) as a strided slice."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops
from xlac.passes.ingest.diagonal_sums import diagonal_slice, iota_dim, splat_offset
from xlac.passes.ingest.unroll_short_loops import defining_op as _owner


class DiagonalGathers(ModulePass):
    """A `stablehlo.gather` of single elements of x (B... x N x M, static)
    at index pairs (i + a, i + c), i = 0 .. L-1, on x's last two dims (each
    index an iota plus an integer splat, maybe through jax's wrap of negative
    indices `select(v < 0, v + n, v)`, which never fires: all of them in
    bounds), every batch dim of x kept in front of the result: reads the
    diagonal of x flattened, strided by M + 1, from a*M + c.

    Why: jnp.diagonal(a, k) and jnp.diag(a) (any offset, non-square, batched
    over leading dims) lower to such a gather; it ran as a scalar loop of
    clamped index reads (no vector plan: "its body has tensor.extract"),
    computing and storing an index tensor first. A strided slice of the
    reshape is the same elements, read in order, with no index tensor.

        %r = stablehlo.gather(%x, concatenate(broadcast(select(...iota + a)), broadcast(iota + c)))
             {collapsed_slice_dims = [1, 2], start_index_map = [1, 2], offset_dims = [0],
              slice_sizes = [B, 1, 1]} : (BxNxM, Lx2) -> BxL
      ->
        %f = stablehlo.reshape %x : BxNxM -> Bx(N*M)
        %r = stablehlo.slice %f [0:B, a*M+c : a*M+c+(L-1)*(M+1)+1 : M+1]
    """

    name = "xla-diagonal-gathers"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)
    acts_on = frozenset({"stablehlo.gather"})

    def run(self, module: ir.Operation) -> None:
        with ir.Location.unknown(module.context):
            for op in module_ops(module):
                found = _diagonal(op) if op.name == "stablehlo.gather" else None
                if found is not None:
                    _rewrite(op, *found)
                    forget_module_ops()


def _gather_dims(op: ir.Operation) -> dict | None:
    """The gather's dimension numbers as lists (None where it has batching dims)."""
    text = str(op.attributes["dimension_numbers"])
    fields = {}
    for name in ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                 "start_indices_batching_dims", "start_index_map"):
        at = text.find(name + " = [")
        fields[name] = [] if at < 0 else \
            [int(v) for v in text[at + len(name) + 4:text.index("]", at)].split(",") if v.strip()]
    at = text.find("index_vector_dim = ")
    fields["index_vector_dim"] = int(text[at + 19:].split(">")[0].split(",")[0]) if at >= 0 else 0
    if fields["operand_batching_dims"] or fields["start_indices_batching_dims"]:
        return None
    return fields


def _start(value: ir.Value, count: int, bound: int) -> int | None:
    """a where ``value`` (L) is iota + a, maybe through the wrap of negative
    indices by ``bound``, every index in [0, bound); else None."""
    op = _owner(value)
    if op is not None and op.name == "stablehlo.select":
        test = _owner(op.operands[0])
        if test is None or test.name != "stablehlo.compare" \
                or "LT" not in str(test.attributes["comparison_direction"]) \
                or test.operands[0] != op.operands[2] or splat_offset(test.operands[1]) != 0:
            return None
        value = op.operands[2]                       # the wrap: taken only where no index is negative
    found = iota_dim(value, count + bound)
    if found is None or found[0] != 0 or found[1] < 0 or found[1] + count > bound:
        return None
    return found[1]


def _column(value: ir.Value, count: int, bound: int) -> int | None:
    """a of an index column: broadcast_in_dim(iota + a, dims = [0]) to L x 1."""
    op = _owner(value)
    if op is None or op.name != "stablehlo.broadcast_in_dim" or \
            list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"])) != [0]:
        return None
    return _start(op.operands[0], count, bound)


def _diagonal(op: ir.Operation) -> tuple[int, int] | None:
    """(a, c) of a diagonal gather as documented, or None."""
    x, indices = op.operands[0], op.operands[1]
    type_, itype = ir.RankedTensorType(x.type), ir.RankedTensorType(indices.type)
    rank = type_.rank
    dims = _gather_dims(op)
    if dims is None or rank < 2 or not type_.has_static_shape or itype.rank != 2 or itype.shape[1] != 2:
        return None
    shape, count = list(type_.shape), itype.shape[0]
    if dims["index_vector_dim"] != 1 or sorted(dims["start_index_map"]) != [rank - 2, rank - 1] \
            or sorted(dims["collapsed_slice_dims"]) != [rank - 2, rank - 1] \
            or dims["offset_dims"] != list(range(rank - 2)) \
            or list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"])) != shape[:-2] + [1, 1] \
            or list(ir.RankedTensorType(op.results[0].type).shape) != shape[:-2] + [count]:
        return None
    concat = _owner(indices)
    if concat is None or concat.name != "stablehlo.concatenate" or len(concat.operands) != 2 \
            or ir.IntegerAttr(concat.attributes["dimension"]).value != 1:
        return None
    starts = {}
    for value, dim in zip(concat.operands, dims["start_index_map"]):
        starts[dim] = _column(value, count, shape[dim])
    if None in starts.values() or count < 1:
        return None
    return starts[rank - 2], starts[rank - 1]


def _rewrite(op: ir.Operation, row: int, column: int) -> None:
    columns = ir.RankedTensorType(op.operands[0].type).shape[-1]
    count = ir.RankedTensorType(op.results[0].type).shape[-1]
    op.results[0].replace_all_uses_with(diagonal_slice(op, op.operands[0], row * columns + column, count))
    indices = _owner(op.operands[1])
    block = op.operation.block
    op.erase()
    _erase_unread(indices, block)


def _erase_unread(root: ir.Operation, block) -> None:
    """Erase ``root`` and the ops of ``block`` it reads through, those nothing
    else reads (the index columns: iotas, wraps, broadcasts), last first."""
    slice_, work = [], [root]
    while work:
        op = work.pop()
        if op is None or op in slice_ or op.block != block:
            continue
        slice_.append(op)
        work.extend(_owner(v) for v in op.operands)
    for op in reversed(list(block.operations)):
        if op in slice_ and not any(True for r in op.results for _ in r.uses):
            op.erase()
