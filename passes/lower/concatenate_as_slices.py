"""xla-concatenate-as-slices: a concatenate along the innermost axis as slice copies."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.fusion.inline_fusions import GROUP_ATTR
from xlac.passes.lower.pad_as_slices import insert_slice, pads_as_slices, replace_pad_by_slices
from xlac.record import record


@record
class ConcatenateAsSlices(ModulePass):
    """Write a `stablehlo.concatenate` along the innermost axis (the last one
    longer than 1), unless it is a roll that ops of its own kernel read, or
    one that is a kernel of its own along any axis, as each operand inserted
    into its slice of an empty tensor.

    Along an outer axis too where no op of its kernel reads the concatenate
    (the kernel's result: `jnp.stack([a*b, a+b, a-b])`): the per-element
    pick was a loop of its own on one thread, its operands' ops kernels of
    their own anyway (its reads are `tensor.extract`s, which elementwise
    fusion does not fuse into), 0.56 of 0.72 ms for two 512x1024 f32 at
    x86-64-v3; as slices each operand's kernel writes its block of the
    result (xla-write-blocks-in-place): 0.30 ms. `kernel-results=false`
    (the CUDA pipeline, which has no such pass) leaves them to the pick.

    Why: stablehlo-legalize-to-linalg lowers a concatenate to one element-wise
    loop whose body picks its operand per element; along the innermost axis
    that pick changes inside a vector, so every vector becomes two clamped
    gathers and a select (`xla-speculate-branch-reads`), 3-30x slower than
    XLA's row copies (bench/sweep.py). Slices are whole rows of each operand:
    vector copies. Along an outer axis the pick is the same for a whole row
    and the element-wise loop vectorizes, so a concatenate fused with other
    ops there stays; alone in its kernel (no other op of its xla-fuse group)
    its operands are contiguous blocks of the result: copies again, which
    for bytes beat the per-row picks of bool and 8-bit lanes (1.3-2.2x XLA).
    A roll (slices of one tensor side by side) that ops of its kernel read
    stays too: the slices end the kernel's loop there, its result a buffer
    of its own and its readers loops of their own; a stencil of rolls
    (jax_shallow_water, 10 in a step) ran 1.2-1.3x slower that way than with
    the picks, where other concatenates read in their kernel (an LSTM's gates)
    ran faster as slices.

        %r = stablehlo.concatenate %a, %b, dim = 1
               : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
      ->
        %e = tensor.empty() : tensor<4x8xf32>
        %0 = tensor.insert_slice %a into %e[0, 0] [4, 3] [1, 1]
        %r = tensor.insert_slice %b into %0[0, 3] [4, 5] [1, 1]

    A concatenate that only puts one tensor's slices back together in order
    (a complex value's parts split and joined again) is that tensor: no copy.

    A `stablehlo.pad` alone in its kernel is a concatenate of its operand and
    blocks of its value: the same slices (pad_as_slices.py), each element of
    the result written once. `pads=false` (the CUDA pipeline: its convolution
    lowerings find a padded input as a pad) leaves pads alone.
    """

    name = "xla-concatenate-as-slices"
    pads: bool = True
    kernel_results: bool = True      # outer-axis ones unread in their kernel too (the CPU's)

    acts_on = frozenset({"stablehlo.concatenate", "stablehlo.pad"})

    def run(self, module: ir.Operation) -> None:
        ops = [op for op in module_ops(module) if op.name in self.acts_on]
        group_sizes = _group_sizes(ops)
        for op in ops:
            if op.name == "stablehlo.pad":
                if self.pads and _alone_but_scalars(op) and pads_as_slices(op):
                    replace_pad_by_slices(op)
            elif _static(op) and (whole := reassembled_source(op)) is not None:
                op.results[0].replace_all_uses_with(whole)
                op.erase()
            elif _static(op) and (_alone(op, group_sizes)
                                  or (self.kernel_results and _unread_in_its_kernel(op))
                                  or (_along_innermost(op) and not _roll_read_in_its_kernel(op))):
                _replace_by_slices(op)


def _group_sizes(ops: list[ir.Operation]) -> dict:
    """(block, xla-fuse group) -> how many ops of the block carry it, for the
    groups of ``ops`` (one walk per block that holds one)."""
    sizes: dict = {}
    for block in {op.block for op in ops if GROUP_ATTR in op.attributes}:
        for other in block.operations:
            if GROUP_ATTR in other.attributes:
                key = (block, ir.IntegerAttr(other.attributes[GROUP_ATTR]).value)
                sizes[key] = sizes.get(key, 0) + 1
    return sizes


def _alone(op: ir.Operation, group_sizes: dict) -> bool:
    if GROUP_ATTR not in op.attributes:
        return True
    return group_sizes[(op.block, ir.IntegerAttr(op.attributes[GROUP_ATTR]).value)] == 1


def _alone_but_scalars(op: ir.Operation) -> bool:
    """Whether the other ops of ``op``'s xla-fuse group, if any, are scalars
    (jnp.pad's value: a `convert` of an integer 0, fused with the pad)."""
    if GROUP_ATTR not in op.attributes:
        return True
    group = ir.IntegerAttr(op.attributes[GROUP_ATTR]).value
    return all(other == op or GROUP_ATTR not in other.attributes
               or ir.IntegerAttr(other.attributes[GROUP_ATTR]).value != group
               or all(ir.RankedTensorType(r.type).rank == 0 for r in other.results)
               for other in op.block.operations)


def _unread_in_its_kernel(op: ir.Operation) -> bool:
    """Whether no op of ``op``'s xla-fuse group uses its result (the kernel's
    result: its operands' ops write their blocks of it)."""
    if GROUP_ATTR not in op.attributes:
        return True
    group = ir.IntegerAttr(op.attributes[GROUP_ATTR]).value
    return not any(GROUP_ATTR in use.owner.attributes
                   and ir.IntegerAttr(use.owner.attributes[GROUP_ATTR]).value == group
                   for use in op.results[0].uses)


def _roll_read_in_its_kernel(op: ir.Operation) -> bool:
    """Whether the concatenate's operands are slices of one tensor and an op
    of its xla-fuse group uses its result."""
    sources = {_slice_source(value) for value in op.operands}
    if GROUP_ATTR not in op.attributes or len(sources) != 1 or None in sources:
        return False
    group = ir.IntegerAttr(op.attributes[GROUP_ATTR]).value
    return any(GROUP_ATTR in use.owner.attributes
               and ir.IntegerAttr(use.owner.attributes[GROUP_ATTR]).value == group
               for use in op.results[0].uses)


def reassembled_source(op: ir.Operation):
    """The tensor ``op`` puts back together, or None: a concatenate whose
    operands (through reshapes back to the slice's shape) are unit-stride
    slices of one tensor of the result's type, full in every other dim and in
    order along the concatenated one (a complex value's parts split and
    joined again, as the FFT helper's ends do: four copy kernels otherwise,
    ~15% of a 180x720 c64 FFT)."""
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    source, start = None, 0
    for operand in op.operands:
        value = operand
        while _owner_name(value) == "stablehlo.reshape":
            value = _owner(value).operands[0]
        if _owner_name(value) != "stablehlo.slice" or value.type != operand.type:
            return None
        sliced = _owner(value)
        x = sliced.operands[0]
        shape = list(ir.RankedTensorType(x.type).shape)
        lo = list(ir.DenseI64ArrayAttr(sliced.attributes["start_indices"]))
        hi = list(ir.DenseI64ArrayAttr(sliced.attributes["limit_indices"]))
        steps = list(ir.DenseI64ArrayAttr(sliced.attributes["strides"]))
        full = all(lo[d] == 0 and hi[d] == shape[d] for d in range(len(shape)) if d != axis)
        if (source is not None and x != source) or not full or lo[axis] != start \
                or any(step != 1 for step in steps):
            return None
        source, start = x, hi[axis]
    if source is None or source.type != op.results[0].type or \
            start != ir.RankedTensorType(source.type).shape[axis]:
        return None
    return source


def _owner(value: ir.Value):
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    return owner if isinstance(owner, ir.Operation) else None


def _owner_name(value: ir.Value) -> str | None:
    owner = _owner(value)
    return owner.name if owner is not None else None


def _slice_source(value: ir.Value):
    """The tensor a `stablehlo.slice` result was cut from, or None."""
    return _owner(value).operands[0] if _owner_name(value) == "stablehlo.slice" else None


def _static(op: ir.Operation) -> bool:
    return all(ir.RankedTensorType(value.type).has_static_shape
               for value in [*op.operands, op.results[0]])


def _along_innermost(op: ir.Operation) -> bool:
    shape = ir.RankedTensorType(op.results[0].type).shape
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    return all(extent == 1 for extent in shape[axis + 1:])


def _replace_by_slices(op: ir.Operation) -> None:
    result_type = op.results[0].type
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    rank = ir.RankedTensorType(result_type).rank
    with ir.InsertionPoint(op), op.location:
        whole = ir.Operation.create("tensor.empty", results=[result_type]).results[0]
        start = 0
        for value in op.operands:
            shape = list(ir.RankedTensorType(value.type).shape)
            offsets = [0] * rank
            offsets[axis] = start
            whole = insert_slice(value, whole, offsets, shape)
            start += shape[axis]
    op.results[0].replace_all_uses_with(whole)
    op.erase()

