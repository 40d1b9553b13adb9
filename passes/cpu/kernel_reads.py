"""What a kernel of the entry reads and how its values cross a call: shared by
xla-outline-kernels and its reuse of a repeated kernel's function
(``kernel_repeats``)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import nested_ops
from xlac.signature import constant_index

# Ops that only name memory or a value: copied into each kernel that reads
# them (so kernels over equal views of different buffers are equal) rather
# than passed in, which also keeps every argument a plain pointer.
# Every arith op is pure too.
COPIED = ("ub.poison", "memref.get_global", "memref.subview", "memref.expand_shape",
          "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast",
          "memref.transpose", "vector.constant_mask", "vector.create_mask", "vector.broadcast")
# Ops with no effect a kernel could be moved across.
INERT = (*COPIED, "memref.alloc", "memref.alloca")
# Top-level ops that are no kernel: memory management, views, calls, the end.
NOT_KERNELS = (*INERT, "memref.dealloc", "func.call", "func.return",
               "memref.extract_strided_metadata", "memref.extract_aligned_pointer_as_index",
               "memref.load", "memref.store")


def copied_in(op: ir.Operation) -> bool:
    if op.name == "memref.get_global" and _program_constant(op):
        return False
    return op.name in COPIED or (op.name.startswith("arith.") and not op.regions)


def _program_constant(op: ir.Operation) -> bool:
    """Whether ``op`` reads one of the program's large constants
    (xla-constant-arguments-to-globals): passed in, as the argument it was,
    so kernels over different weights stay one function. Copied in, each was
    a kernel of its own: ResNet-18 with its weights in the program had 87
    functions for LLVM against 60 with them as arguments."""
    return constant_index(ir.FlatSymbolRefAttr(op.attributes["name"]).value) is not None


def inert(op: ir.Operation) -> bool:
    return op.name in INERT or copied_in(op)


def does_work(op: ir.Operation) -> bool:
    return not (op.name in NOT_KERNELS or copied_in(op) or op.name.startswith(("omp.", "llvm.")))


def outside_reads(op: ir.Operation, nested: list[ir.Operation] | None = None
                  ) -> list[tuple[ir.Operation, int, ir.Value]]:
    """``(reader, operand index, value)`` of each value ``op`` or an op inside
    it reads that is made outside ``op``, ``op``'s own operands first, then
    the ops inside in pre-order.

    Why one list: what the kernel is passed, whether it frees one of those,
    and where it reads them once moved were each a walk of every op inside
    the kernel and of all their operands; only these reads matter to any.
    ``nested``: ``nested_ops(op)``, where the caller has it already.
    """
    if nested is None:
        nested = nested_ops(op)
    made = _values_made_in(op.operation, nested)
    reads = [(op, index, value) for index, value in enumerate(op.operands)]
    for each in nested:
        for index, value in enumerate(each.operands):
            if value not in made:
                reads.append((each, index, value))
    return reads


def _values_made_in(op: ir.Operation, nested: list[ir.Operation]) -> set[ir.Value]:
    """The results of ``op`` and of the ops inside it, and the arguments of
    their blocks. Why a set of values: asking each operand for its owner (an
    op view made per operand) was twice the time (ViT: 15 -> 8 ms a compile)."""
    made: set[ir.Value] = set()
    for each in (op, *nested):
        made.update(each.results)
        for region in each.regions:
            for block in region.blocks:
                made.update(block.arguments)
    return made


def passable(t: ir.Type) -> bool:
    """A type the bare-pointer convention passes: a number or a memref of static strides."""
    if isinstance(t, ir.MemRefType):
        strides, offset = t.get_strides_and_offset()
        dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
        return offset != dynamic and dynamic not in strides
    return isinstance(t, (ir.IndexType, ir.IntegerType, ir.FloatType))


def crossing_type(t: ir.Type) -> ir.Type:
    """The type a value of type ``t`` crosses the call as: a 16-bit float as its
    bits. LLVM passes a bf16 (and, without F16C, an f16) scalar widened to f32,
    narrowing it again with libgcc's ``__truncsfbf2`` (``__truncsfhf2``), which
    the JIT cannot find (``jnp.pad`` of bf16 on an AVX2 machine)."""
    if isinstance(t, (ir.BF16Type, ir.F16Type)):
        return ir.IntegerType.get_signless(16)
    return t


def bitcast(value: ir.Value, to: ir.Type) -> ir.Value:
    if value.type == to:
        return value
    return ir.Operation.create("arith.bitcast", results=[to], operands=[value]).result
