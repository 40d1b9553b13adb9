"""xla-update-windows-in-place: a slice read, combined and written back, updated in place."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops, text_of


class UpdateWindowsInPlace(ModulePass):
    """Where a parallel linalg.generic reads a `tensor.extract_slice` of a
    tensor (element for element: other inputs may be broadcast) into a
    `tensor.empty` and its result is `tensor.insert_slice`d back into that
    tensor at the same place, make the slice the generic's init (its
    element read through the output block argument) instead of an input.

    Why: xla-lower-scatter combines each update window with the operand's
    window this way (a segment sum: one row added per index). Written into
    a fresh tensor, every window was a malloc, the combine and a copy back
    (16,384 rows of 64: 0.21 ms); with the window as init, bufferization
    updates the operand's row in place.

        %old = tensor.extract_slice %acc[%i, 0] [1, 64] [1, 1]
        %new = linalg.generic ins(%old, %upd) outs(%empty) { %o + %u }
        %r = tensor.insert_slice %new into %acc[%i, 0] [1, 64] [1, 1]
      ->
        %new = linalg.generic ins(%upd) outs(%old) { %o + %u }
    """

    name = "xla-update-windows-in-place"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "linalg.generic":
                window = _window_input(op)
                if window is not None:
                    _make_init(op, window)
                    forget_module_ops()


def _window_input(op: ir.Operation) -> int | None:
    """The input that is the window ``op``'s result is written back over, if any."""
    ins, outs = split_operands(op)
    if len(outs) != 1 or len(op.results) != 1 or not owned_by(outs[0], "tensor.empty") \
            or not parallel_at_output(op):
        return None
    out = outs[0]
    uses = list(op.results[0].uses)
    if len(uses) != 1 or uses[0].owner.name != "tensor.insert_slice":
        return None
    insert = uses[0].owner
    maps = _maps(op)
    for index, value in enumerate(ins):
        if owned_by(value, "tensor.extract_slice") and len(list(value.uses)) == 1 \
                and value.type == out.type and _identity(maps[index], op) \
                and _same_place(value.owner, insert):
            return index
    return None


def _same_place(extract: ir.Operation, insert: ir.Operation) -> bool:
    """Both slice the same tensor at the same offsets, sizes and strides."""
    source, *dynamic_extract = list(extract.operands)
    _, destination, *dynamic_insert = list(insert.operands)
    same_attrs = all(str(extract.attributes[name]) == str(insert.attributes[name])
                     for name in ("static_offsets", "static_sizes", "static_strides"))
    return source == destination and same_attrs and dynamic_extract == dynamic_insert


def _make_init(op: ir.Operation, window: int) -> None:
    """Rebuild ``op`` with input ``window`` as its init (the old op is erased)."""
    ins, _ = split_operands(op)
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    kept = [value for index, value in enumerate(ins) if index != window]
    old_block = op.regions[0].blocks[0]
    attributes = {name: op.attributes[name] for name in op.attributes}   # fusion tags too
    attributes["indexing_maps"] = ir.ArrayAttr.get(
        [m for i, m in enumerate(maps[:-1]) if i != window] + [maps[-1]])
    attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(kept), 1])
    with op.location, ir.InsertionPoint(op):
        generic = ir.Operation.create("linalg.generic", results=[op.results[0].type],
                                      operands=[*kept, ins[window]], attributes=attributes,
                                      regions=1)
    old_block.append_to(generic.regions[0])       # the body moves whole
    arguments = list(old_block.arguments)
    arguments[window].replace_all_uses_with(arguments[-1])   # the empty's elements were unread
    old_block.erase_argument(window)
    op.results[0].replace_all_uses_with(generic.results[0])
    op.erase()


def split_operands(op: ir.Operation) -> tuple[list[ir.Value], list[ir.Value]]:
    ins_count, outs_count = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands = list(op.operands)
    return operands[:ins_count], operands[ins_count:ins_count + outs_count]


def owned_by(value: ir.Value, name: str) -> bool:
    return isinstance(value.owner, ir.OpView) and value.owner.name == name


def parallel_at_output(op: ir.Operation) -> bool:
    """Parallel loops only, the output read and written where the loops are.
    (Other inputs may be read elsewhere: a per-row weight broadcast along
    the window, as an embedding bag's is.)"""
    kinds = [text_of(kind) for kind in ir.ArrayAttr(op.attributes["iterator_types"])]
    return all("parallel" in kind for kind in kinds) and _identity(_maps(op)[-1], op)


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]


def _identity(affine_map: ir.AffineMap, op: ir.Operation) -> bool:
    return str(affine_map) == str(ir.AffineMap.get_identity(affine_map.n_dims, op.context))
