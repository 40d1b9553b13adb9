"""xla-gpu-results-in-slices: an op whose result is only inserted into a larger tensor (a
padding, a concatenation) writes that tensor's slice itself (cuda)."""

from __future__ import annotations

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.record import record

RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")
INVERSE = {"tensor.expand_shape": "CollapseShapeOp", "tensor.collapse_shape": "ExpandShapeOp"}


@record
class GpuResultsInSlices(ModulePass):
    """Before bufferization, give a linalg op whose result (maybe reshaped) is read
    only by a `tensor.insert_slice`, and whose init is a `tensor.empty` or a fill of
    one, the inserted slice of the destination as its init; a constant
    `tensor.pad` of such a result is first a fill and that insert_slice.

    Why: bufferization wrote the result to a buffer of its own and copied it into
    the destination, a kernel per copy, and a pad was two (`linalg.map` filling
    the padded buffer, the copy). With the slice as its init the op writes the
    destination in place (one-shot bufferization pairs the extract_slice with the
    insert_slice): a ResNet block's output padded for the next convolution, the
    flax CNN's per-tap weight gradients concatenated into one [9, C, F] filter.
    XLA does the same (a pad or concatenate fused into its operand's fusion, or
    an in-place dynamic-update-slice).

        %r = linalg.generic ... outs(%empty)
        %p = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] { yield %zero }
      ->
        %f = linalg.fill ins(%zero) outs(%padded_empty)
        %s = tensor.extract_slice %f[0, 1, 1, 0] [shape of %r] [1, 1, 1, 1]
        %r = linalg.generic ... outs(%s)
        %p = tensor.insert_slice %r into %f[0, 1, 1, 0] [shape of %r] [1, 1, 1, 1]

    An op whose init is anything else is left alone, with one exception: an
    epilogue written in its convolution matmul's result (xla-gpu-epilogue-in-place,
    ResNet's batch norm + relu) runs in the generated matmul's kernel, so taking
    it out would cost the kernel the copy saved; but cuBLASLt (``library=true``)
    runs only bias, relu and GELU itself, so an epilogue with any other op
    (batch norm's subtract, rsqrt) is a kernel after the call either way, and
    there it writes the slice.
    """

    name = "xla-gpu-results-in-slices"
    acts_on = frozenset({"tensor.insert_slice", "tensor.pad"})
    library: bool = False           # matmuls go to cuBLASLt (xla-gpu-library-matmuls)

    def run(self, module: ir.Operation) -> None:
        # listed first: a pad's region (its yield) goes with it
        for op in [op for op in nested_ops(module) if op.name in self.acts_on]:
            if op.name == "tensor.pad" and _producer(op.operands[0], op, self.library) is not None:
                op = _as_fill_and_insert(op)
            if op is not None and op.name == "tensor.insert_slice":
                _write_in_slice(op, self.library)


def _producer(value, reader, library: bool) -> tuple[ir.Operation, list[ir.Operation]] | None:
    """The linalg op making ``value`` for ``reader`` alone (in its block) and the
    reshapes between them, where its init is a tensor.empty or a single-use fill of
    one (or, with ``library``, a convolution's matmul result it does not read and
    cuBLASLt cannot apply); else None."""
    reshapes = []
    while isinstance(value, ir.OpResult) and value.owner.name in RESHAPES and _one_use(value):
        reshapes.append(value.owner)
        value = value.owner.operands[0]
    if not (isinstance(value, ir.OpResult) and value.owner.name.startswith("linalg.")
            and _one_use(value) and len(value.owner.results) == 1
            and value.owner.operation.block == reader.operation.block):
        return None
    op = value.owner
    init = op.operands[len(op.operands) - 1]
    if not (_fresh(init) or library and _epilogue_the_library_leaves(op, init)):
        return None
    return op, reshapes


def _fresh(init) -> bool:
    if not isinstance(init, ir.OpResult):
        return False
    owner = init.owner
    if owner.name == "linalg.fill":
        return _one_use(init) and _fresh_empty(owner.operands[1])
    return owner.name == "tensor.empty"


# all the ops of the library's epilogues (bias, relu, GELU's tanh form)
LIBRARY_EPILOGUE_OPS = frozenset({"arith.addf", "arith.mulf", "arith.maximumf", "math.tanh",
                                  "arith.constant", "linalg.yield"})


def _epilogue_the_library_leaves(op, init) -> bool:
    """An elementwise generic writing its convolution matmul's result in place
    whose region holds an op no cuBLASLt epilogue has."""
    matmul = init.owner if isinstance(init, ir.OpResult) else None
    if matmul is not None and matmul.name == "tensor.expand_shape":
        matmul = matmul.operands[0].owner
    if op.name != "linalg.generic" or not isinstance(matmul, ir.OpView) \
            or matmul.name != "linalg.matmul" or "xla.conv" not in matmul.attributes:
        return False
    body = op.regions[0].blocks[0]
    if list(body.arguments[len(body.arguments) - 1].uses):
        return False
    return any(inner.name not in LIBRARY_EPILOGUE_OPS for inner in body.operations)


def _fresh_empty(value) -> bool:
    return isinstance(value, ir.OpResult) and value.owner.name == "tensor.empty"


def _one_use(value) -> bool:
    return len(list(value.uses)) == 1


def _as_fill_and_insert(pad) -> ir.Operation | None:
    """A static pad by a constant: a fill of the padded tensor and an insert_slice."""
    body = list(pad.regions[0].blocks[0].operations)
    value = body[-1].operands[0] if len(body) == 1 else None
    padded = ir.RankedTensorType(pad.results[0].type)
    if value is None or isinstance(value, ir.BlockArgument) or not padded.has_static_shape \
            or "?" in str(pad.attributes["static_low"]) or value.owner.name not in (
                "arith.constant",):
        return None
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    source = pad.operands[0]
    shape = ir.RankedTensorType(source.type).shape
    tensor, linalg = dialect("tensor"), dialect("linalg")
    with ir.InsertionPoint(pad), pad.location:
        empty = tensor.EmptyOp(padded.shape, padded.element_type).result
        filled = linalg.fill(value, outs=[empty])
        insert = tensor.InsertSliceOp(source, filled, [], [], [], low, shape, [1] * len(shape))
    pad.results[0].replace_all_uses_with(insert.result)
    pad.erase()
    return insert.operation


def _write_in_slice(insert, library: bool) -> None:
    if len(insert.operands) != 2:       # dynamic offsets (a dynamic_update_slice): left alone
        return
    found = _producer(insert.operands[0], insert, library)
    if found is None:
        return
    op, reshapes = found
    tensor = dialect("tensor")
    init_index = len(op.operands) - 1
    init = op.operands[init_index]
    with ir.InsertionPoint(insert), insert.location:
        value = tensor.ExtractSliceOp(insert.operands[0].type, insert.operands[1], [], [], [],
                                      insert.attributes["static_offsets"], insert.attributes["static_sizes"],
                                      insert.attributes["static_strides"]).result
        for reshape in reversed(reshapes):   # back to the op's own shape
            value = getattr(tensor, INVERSE[reshape.name])(
                reshape.operands[0].type, value, reshape.attributes["reassociation"],
                **_expand_shape(reshape)).result
    if init.owner.name == "linalg.fill":
        fill = init.owner
        fill.operands[1] = value
        fill.move_before(insert)
    else:
        op.operands[init_index] = value
    op.move_before(insert)
    for reshape in reshapes[::-1]:
        reshape.move_before(insert)


def _expand_shape(reshape) -> dict:
    """An expand_shape's extra arguments when undoing a collapse_shape."""
    if reshape.name != "tensor.collapse_shape":
        return {}
    return {"output_shape": [], "static_output_shape": ir.RankedTensorType(reshape.operands[0].type).shape}
