"""xla-results-in-slices: a multi-result linalg.generic whose results are each
inserted into one destination writes that destination's slices itself (cpu)."""

from __future__ import annotations

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops


class ResultsInSlices(ModulePass):
    """Where every result of a linalg.generic with several results goes only to
    a static `tensor.insert_slice`, the inserts a chain into one destination
    (each into the one before, the first into a tensor defined before the
    generic in its block) and every init is a `tensor.empty`, make each init
    the slice of that first destination its result is inserted at.

    Why: xla-lower-fft's butterfly stages (fft_stages) read r complex
    inputs and write r outputs into r slices of one tensor; the
    generic's inits were slices of it, but linalg-fuse-elementwise-ops
    replaces an init the body does not read by a `tensor.empty`, so each
    result got a buffer of its own and a copy kernel into the destination
    (24 copies for a radix-12 stage). With the slices back as inits
    one-shot bufferization pairs each extract_slice with its insert_slice and
    the generic writes the destination in place.

        %r:2 = linalg.generic ... outs(%e0, %e1)        // tensor.empty
        %i0 = tensor.insert_slice %r#0 into %d[0, 0] [4, 1] [1, 1]
        %i1 = tensor.insert_slice %r#1 into %i0[0, 1] [4, 1] [1, 1]
      ->
        %s0 = tensor.extract_slice %d[0, 0] [4, 1] [1, 1]
        %s1 = tensor.extract_slice %d[0, 1] [4, 1] [1, 1]
        %r:2 = linalg.generic ... outs(%s0, %s1)
    """

    name = "xla-results-in-slices"
    keeps_ops = True

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "linalg.generic" and len(op.results) > 1:
                inserts = _chain(op)
                if inserts is not None:
                    _write_in_slices(op, inserts)
                    forget_module_ops()


def _chain(op: ir.Operation) -> list[ir.Operation] | None:
    """The insert_slice of each result, if they chain into one destination."""
    inits = list(op.operands)[len(op.operands) - len(op.results):]
    if any(_owner_name(v) != "tensor.empty" for v in inits):
        return None
    inserts = []
    for result in op.results:
        uses = list(result.uses)
        if len(uses) != 1 or uses[0].owner.operation.name != "tensor.insert_slice" \
                or uses[0].operand_number != 0 or len(uses[0].owner.operands) != 2:
            return None
        inserts.append(uses[0].owner.operation)
    chained = {insert.results[0]: insert for insert in inserts}
    roots = [i for i in inserts if i.operands[1] not in chained]
    if len(roots) != 1:
        return None
    root = roots[0].operands[1]
    if _owner_name(root) is None or root.owner.operation.block != op.block \
            or not root.owner.operation.is_before_in_block(op):
        return None
    for insert in inserts:      # each destination only the chain's next insert's
        users = list(insert.results[0].uses)
        if sum(u.owner.operation in inserts for u in users) > 1:
            return None
    return inserts


def _owner_name(value: ir.Value) -> str | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation.name


def _write_in_slices(op: ir.Operation, inserts: list[ir.Operation]) -> None:
    tensor = dialect("tensor")
    chained = {insert.results[0] for insert in inserts}
    root = next(i.operands[1] for i in inserts if i.operands[1] not in chained)
    first = len(op.operands) - len(op.results)
    with ir.InsertionPoint(op), op.location:
        for index, insert in enumerate(inserts):
            value = tensor.ExtractSliceOp(insert.operands[0].type, root, [], [], [],
                                          insert.attributes["static_offsets"],
                                          insert.attributes["static_sizes"],
                                          insert.attributes["static_strides"]).result
            op.operands[first + index] = value
