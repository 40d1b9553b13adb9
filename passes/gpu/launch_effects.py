"""Which buffers a host op reads and writes, by the allocation (or argument or
global) under its views: what decides whether two kernels may run as one
(``gpu_horizontal_launches.py``).

A buffer is named by its root: views (subview, reshapes, casts, the shared
convolution scratch's reinterpret_casts) are followed to the value they view.
Distinct roots never overlap at run time: the schedule gives every allocation
memory of its own for the whole call, and the function's arguments are distinct
buffers (a loop's carried buffers are all one root: an iteration may carry one
buffer twice) (a donated input that a result may take over is decided on the final
schedule, ``device_calls.may_write_in_place``, which sees the merged kernels).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlac.mlir import ir
from xlac.passes.base import nested_ops

VIEWS = frozenset({"memref.subview", "memref.reinterpret_cast", "memref.expand_shape",
                   "memref.collapse_shape", "memref.cast", "memref.view", "memref.transpose",
                   "memref.memory_space_cast"})
LOADS = frozenset({"memref.load", "vector.load", "vector.transfer_read", "vector.maskedload",
                   "vector.gather"})
# Host ops that touch no memory (an allocation is a new root nobody else names).
PURE = frozenset({"arith.constant", "memref.alloc", "memref.alloca", "memref.get_global",
                  "memref.dim", "memref.extract_strided_metadata"}) | VIEWS


@dataclass
class Effects:
    """Roots read and written; ``barrier``: nothing may move across the op."""
    reads: set = field(default_factory=set)
    writes: set = field(default_factory=set)
    barrier: bool = False

    def conflicts(self, other: Effects) -> bool:
        """Does the order of the two matter?"""
        if self.barrier or other.barrier:
            return True
        return bool(self.writes & (other.reads | other.writes) or self.reads & other.writes)

    def add(self, other: Effects) -> None:
        self.reads |= other.reads
        self.writes |= other.writes
        self.barrier |= other.barrier


def root(value: ir.Value):
    """The buffer ``value`` views: an op result, a block argument, or a global's name."""
    while not isinstance(value.owner, ir.Block):
        owner = value.owner.operation
        if owner.name == "memref.get_global":
            return "global:" + str(owner.attributes["name"])
        if owner.name not in VIEWS:
            return value
        value = owner.operands[0]
    if value.owner.owner.operation.name != "func.func":
        return "carried"        # a loop's carried buffers: two of them may be one buffer
    return value


def host_op_effects(op: ir.Operation) -> Effects:
    """What a host op that is not a kernel does to memory: nothing for the pure
    ones; reads and writes of every buffer operand otherwise; a barrier for
    anything with regions (host control flow) or a call that is not a GEMM."""
    if op.name in PURE or op.name.startswith("arith."):
        return Effects()
    if len(op.regions) > 0 or (op.name == "func.call" and not _gemm_call(op)):
        return Effects(barrier=True)
    roots = {root(v) for v in op.operands if isinstance(v.type, ir.MemRefType)}
    if op.name == "func.call":          # a GEMM (a, b, c, epilogue operands): writes c alone
        return Effects(reads=roots, writes={root(op.operands[2])})
    return Effects(reads=set(roots), writes=set(roots))


def _gemm_call(op: ir.Operation) -> bool:
    """A cuBLASLt call (``gpu_library_matmuls``): it reads its buffer operands and
    writes C, the third, and nothing else."""
    return str(op.attributes["callee"]).startswith("@xla_gemm_")


def launch_effects(launch: ir.Operation) -> Effects:
    """The buffers a ``gpu.launch`` body reads and writes from outside: a buffer
    only loaded is read; any other use (a store, an atomic, a view) is taken as
    a write too."""
    inside = nested_ops(launch)
    own_ops = set(inside) | {launch}
    effects = Effects()
    for op in inside:
        for value in op.operands:
            if not isinstance(value.type, ir.MemRefType) or _defined_inside(value, own_ops):
                continue
            effects.reads.add(root(value))
            if op.name not in LOADS:
                effects.writes.add(root(value))
    return effects


def captured_values(launch: ir.Operation) -> set:
    """The values defined outside ``launch`` that its body reads."""
    inside = nested_ops(launch)
    own_ops = set(inside) | {launch}
    return {value for op in inside for value in op.operands
            if not _defined_inside(value, own_ops)}


def _defined_inside(value: ir.Value, own_ops: set) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        owner = owner.owner
    return owner.operation in own_ops
