"""xla-flatten-minor-transfers: a vector of rows of a short minor dim moves as one 1-D vector."""

from __future__ import annotations

from xlac.mlir import ir, transform_interpreter
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.cpu.register_tile_loops import minor_identity
from xlac.passes.cpu.strided_minor_reads import contiguous_read, strided_read

# set by the `xla_elementwise_minor_*` schedules on the loop their W x M vectors walk
FLATTEN_TAG = "xla.flatten_transfers"
# set by `xla_reduce_kept_minor_3d` on its reduction loop: a K x 16 vector read
# transposed from 16 rows of K contiguous elements
TRANSPOSED_TAG = "xla.flatten_transposed_transfers"
# set by this pass on a kernel that reads an N x 1 (or 1 x N) vector transposed
UNIT_TAG = "xla.drop_unit_transfer_dims"

_SCRIPT = f"""
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %loops = transform.structured.match attributes{{{FLATTEN_TAG}}} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %loops {{
      transform.apply_patterns.vector.flatten_vector_transfer_ops
    }} : !transform.any_op
    %transposing = transform.structured.match attributes{{{TRANSPOSED_TAG}}} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %transposing {{
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.flatten_vector_transfer_ops
    }} : !transform.any_op
    %unit = transform.structured.match attributes{{{UNIT_TAG}}} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %unit {{
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    }} : !transform.any_op
    transform.yield
  }}
}}"""


class FlattenMinorTransfers(ModulePass):
    """In each loop the elementwise schedules tagged (a kernel whose minor dim
    is shorter than a vector: a complex number's 2 parts), every transfer of
    a ``W x M`` vector to rows contiguous in memory becomes one transfer of a
    ``W*M`` vector (upstream's `flatten_vector_transfer_ops`, on buffers).

    Why: convert-vector-to-scf splits an n-D transfer into its 1-D rows, so
    a c128 column broadcast wrote one 16-byte pair a store (4 per AVX-512
    register's worth); flattened, one store fills the register. Transfers
    elsewhere (register tiles, reductions) are not touched: only the tagged
    loops are rewritten.

        vector.transfer_write %v, %m[%i, %j, %c0] : vector<4x2xf64>, memref<64x1024x2xf64, ...>
      ->
        %flat = memref.collapse_shape %m [[0], [1, 2]] ...
        vector.transfer_write (vector.shape_cast %v to vector<8xf64>), %flat[%i, %j * 2]

    Anywhere, a read of every s-th element along a strided minor dim (s <= 4:
    an NCHW max-pool gradient's window positions, `x[..., ::2]`) becomes one
    contiguous masked load and a shuffle (strided_minor_reads.py), not W
    scalar loads.

    The loop of a row sum whose kept minor dim is short (a complex row sum,
    `xla_reduce_kept_minor_3d`) has the other tag: its ``K x 16`` read of 16
    rows of ``K`` contiguous elements, transposed, first becomes a read of
    ``16 x K`` and a `vector.transpose` (`transfer_permutation_patterns`),
    then one contiguous ``16*K`` load; LLVM transposes it with shuffles
    (c64 at x86-64-v3: one 32-lane load where 16 two-lane loads were).

    A kernel that reads an ``N x 1`` vector transposed from a row (a column
    sum's tile of a transposed operand: `jnp.einsum("ii->i")`'s masked
    diagonal, `xla_reduce_outer_2d`) gets the third tag: the read becomes a
    1-D ``N`` read and its users' ``N x 1`` ops 1-D ones
    (`drop_unit_dims_with_shape_cast`, `cast_away_vector_leading_one_dim`).
    Why: LLVM keeps a ``vector<64x1xf32>`` as 64 one-lane vectors, and
    without mask registers (AVX2) each lane's `arith.select` became a
    compare and a branch: the 2000x2000 diagonal took 35-39 ms at x86-64-v3.
    """

    name = "xla-flatten-minor-transfers"

    def run(self, module: ir.Operation) -> None:
        ops = module_ops(module)
        for op in ops:
            if op.name == "vector.transfer_read" and _transposed_unit_read(op):
                _tag_function(op)
        tagged = [op for op in ops if any(tag in op.attributes for tag in (FLATTEN_TAG, TRANSPOSED_TAG, UNIT_TAG))]
        _strided_reads_contiguous([op for op in ops if op.name == "vector.transfer_read"])
        if not tagged:
            return
        script = ir.Module.parse(_SCRIPT, module.context)
        interpreter = transform_interpreter()
        options = interpreter.TransformOptions()
        options.expensive_checks = False
        interpreter.apply_named_sequence(module, script.body.operations[0].operation,
                                         script.operation, options)
        for op in tagged:
            for tag in (FLATTEN_TAG, TRANSPOSED_TAG, UNIT_TAG):
                if tag in op.attributes:
                    del op.attributes[tag]


def _strided_reads_contiguous(reads: list[ir.Operation]) -> None:
    """Each read of every s-th element of a row as a contiguous masked load
    and a shuffle (strided_minor_reads.py: an NCHW max-pool gradient's window
    positions, ``x[..., ::2]``)."""
    for read in reads:
        stride = strided_read(read)
        if stride is not None:
            with read.location:
                contiguous_read(read, stride)


def _transposed_unit_read(read: ir.Operation) -> bool:
    """A 2-D read with a unit dim whose map is not the memref's minor identity."""
    shape = ir.VectorType(read.results[0].type).shape
    return len(shape) == 2 and 1 in shape and not minor_identity(read.attributes["permutation_map"], 2)


def _tag_function(op: ir.Operation) -> None:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    if parent is not None:
        parent.attributes[UNIT_TAG] = ir.UnitAttr.get()
