"""What the GPU kernel passes share: the host function's top-level ops and the
constant fills that a kernel can fold into itself."""

from __future__ import annotations

import ctypes

from xlac.mlir import ir
from xlac.passes.base import functions


def top_level_ops(module: ir.Operation) -> list[ir.Operation]:
    """The ops of every host block (``host_blocks``), block by block, in order."""
    return [op.operation for block in host_blocks(module) for op in block.operations]


HOST_LOOP = "xla.host_loop"      # an scf.for xla-gpu-counted-loops made of a while: the host runs it
_CONTROL_FLOW = ("scf.while", "scf.if", "scf.index_switch")
_DEVICE_WORK = ("linalg.", "gpu.launch", "scf.parallel", "memref.copy", "memref.alloc", "func.call")


def host_blocks(module: ir.Operation) -> list[ir.Block]:
    """The blocks whose ops the host schedule runs: each function's body, then
    (depth first) the blocks of the host control flow in it."""
    blocks = []
    for func in functions(module):
        if func.regions[0].blocks:
            blocks += _with_nested_host_blocks(func.regions[0].blocks[0])
    return blocks


def _with_nested_host_blocks(block: ir.Block) -> list[ir.Block]:
    blocks = [block]
    for op in block.operations:
        if host_control_flow(op.operation):
            for region in op.regions:
                for inner in region.blocks:
                    blocks += _with_nested_host_blocks(inner)
    return blocks


def host_control_flow(op: ir.Operation) -> bool:
    """Whether ``op``, in a host block, is control flow the host runs: a while, if
    or index_switch that carries buffers (or tensors) or holds device work (kernels,
    copies, buffers), or a counted scf.for xla-gpu-counted-loops marked. A scalar
    loop of a lowering (top_k's, scatter's) is device work: one thread runs it."""
    if op.name == "scf.for":
        return HOST_LOOP in op.attributes
    if op.name not in _CONTROL_FLOW:
        return False
    if any(isinstance(v.type, (ir.MemRefType, ir.RankedTensorType)) for v in op.results):
        return True
    found = []

    def visit(inner):
        if inner.name.startswith(_DEVICE_WORK):
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return bool(found)


def block_position(op: ir.Operation) -> int:
    """Where ``op`` is in its block. A binary search on ``is_before_in_block``
    whose probes index the block's list, a walk in C++: a Python list of the
    whole block for every matmul made these passes quadratic (1,000 matmuls
    in one host function: 2 s)."""
    ops = op.block.operations
    low, high = 0, len(ops) - 1
    while low <= high:
        middle = (low + high) // 2
        probe = ops[middle].operation
        if probe == op:
            return middle
        if probe.is_before_in_block(op):
            low = middle + 1
        else:
            high = middle - 1
    raise ValueError(f"'{op.name}' is not in its own block")


def ops_before(op: ir.Operation, order: OpOrder | None = None):
    """The ops before ``op`` in its block, nearest first, made one at a time
    (from ``order``'s list when given: no walk of the block)."""
    if order is not None:
        yield from order.before(op)
        return
    ops = op.block.operations
    for index in range(block_position(op) - 1, -1, -1):
        yield ops[index].operation


def ops_after(op: ir.Operation, count: int, order: OpOrder | None = None) -> list[ir.Operation]:
    """Up to ``count`` ops after ``op`` in its block, nearest first."""
    if order is not None:
        return order.after(op, count)
    ops = op.block.operations
    start = block_position(op) + 1
    return [ops[index].operation for index in range(start, min(start + count, len(ops)))]


_CAPSULE_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_CAPSULE_POINTER.restype, _CAPSULE_POINTER.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_CAPSULE_NAME = ctypes.pythonapi.PyCapsule_GetName
_CAPSULE_NAME.restype, _CAPSULE_NAME.argtypes = ctypes.c_char_p, [ctypes.py_object]


def address(op: ir.Operation) -> int:
    """The C++ operation's address: what stays the op's own while it lives
    (``_CAPIPtr`` is the bindings' C API handle, a capsule around it)."""
    capsule = op._CAPIPtr
    return _CAPSULE_POINTER(capsule, _CAPSULE_NAME(capsule))


class OpOrder:
    """The host blocks' ops (``host_blocks``), listed in one walk per pass run,
    for the neighbour searches of a pass that rewrites op by op: each search
    reads a Python list instead of walking its block (indexing a block's op list
    from Python walks it in C++: a search per matmul made xla-gpu-matmul-kernels
    quadratic, 500 -> 2,000 ops 21x). The pass keeps it in step with its edits:
    ``replaced`` (an op by the call made in its place), ``erased``. Ops it adds
    beside them (views) are not listed: the searches pass over views anyway.
    ``visits`` counts the list slots the searches read (tests bound it)."""

    def __init__(self, module: ir.Operation):
        self._lists: list[list] = []
        # keyed by the op's address (``address``), taken while it lives: each read of a
        # block's list makes new Python objects, and address(op) changes as operands do
        self._place: dict[int, tuple[list, int]] = {}
        for block in host_blocks(module):
            ops = [op.operation for op in block.operations]
            self._lists.append(ops)
            self._place.update((address(op), (ops, index)) for index, op in enumerate(ops))
        self.visits = 0

    def ops(self):
        """Every listed op still there, block by block, in order (``top_level_ops``),
        read as the pass goes: one it erased meanwhile is not handed out."""
        for ops in self._lists:
            for index in range(len(ops)):
                if ops[index] is not None:
                    yield ops[index]

    def before(self, op: ir.Operation):
        ops, index = self._place[address(op)]
        for earlier in range(index - 1, -1, -1):
            self.visits += 1
            if ops[earlier] is not None:
                yield ops[earlier]

    def after(self, op: ir.Operation, count: int) -> list[ir.Operation]:
        ops, index = self._place[address(op)]
        found = []
        for later in range(index + 1, len(ops)):
            self.visits += 1
            if ops[later] is not None:
                found.append(ops[later])
                if len(found) == count:
                    break
        return found

    def between(self, first: ir.Operation, last: ir.Operation) -> list[ir.Operation] | None:
        """The listed ops strictly between ``first`` and ``last`` of one block, or None
        where ``last`` is not after ``first`` there."""
        (ops, start), (other, end) = self._place[address(first)], self._place[address(last)]
        if ops is not other or end <= start:
            return None
        self.visits += end - start
        return [op for op in ops[start + 1:end] if op is not None]

    def key(self, op: ir.Operation) -> int:
        """What names ``op`` here once it is erased (take it before)."""
        return address(op)

    def replaced(self, old_key: int, new: ir.Operation) -> None:
        """The op ``old_key`` names (``key``, taken before it was erased) is now ``new``."""
        ops, index = self._place.pop(old_key)
        ops[index] = new
        self._place[address(new)] = (ops, index)

    def erased(self, op: ir.Operation) -> None:
        """``op`` is about to be erased (call before erasing it)."""
        place = self._place.pop(address(op), None)
        if place is not None:
            place[0][place[1]] = None


def has_reduction(op: ir.Operation) -> bool:
    return any("reduction" in str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"]))


def is_memref(value: ir.Value) -> bool:
    return isinstance(value.type, ir.MemRefType)


def element_type(value: ir.Value) -> ir.Type:
    """A memref's element type, or the type of a scalar."""
    return ir.MemRefType(value.type).element_type if is_memref(value) else value.type


# Ops that give another view of their first operand's buffer.
_VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape",
          "memref.reinterpret_cast", "memref.cast", "memref.view")
# How far back a kernel looks for its output's fill: the ops launched between
# (a transpose of another operand) are few; the walk stays linear.
FILL_LOOKBACK = 8


def fill_before(op: ir.Operation, output: ir.Value, order: OpOrder | None = None) -> ir.Operation | None:
    """The constant fill of ``output`` that comes before ``op`` with nothing
    between them touching ``output``'s buffer (a transpose of the other
    operand may be: attention's Q.K^T fills its output, transposes K, then
    multiplies), or None. Up to FILL_LOOKBACK ops that do work are passed."""
    base = buffer_base(output)
    passed = 0
    for candidate in ops_before(op, order):
        if candidate.name == "arith.constant" or candidate.name in _VIEWS:
            continue                # a view alone reads and writes nothing
        if constant_fill_of(candidate, output):
            return candidate
        if any(buffer_base(v) == base for v in candidate.operands) or \
                any(r == base for r in candidate.results):
            return None
        passed += 1
        if passed >= FILL_LOOKBACK:
            return None
    return None


def is_view(op: ir.Operation) -> bool:
    return op.name in _VIEWS


def buffer_base(value: ir.Value) -> ir.Value:
    """The buffer ``value`` is a view of (itself when it is no view)."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in _VIEWS:
        value = value.owner.operands[0]
    return value


def constant_fill_of(op: ir.Operation, output: ir.Value) -> bool:
    """``op`` writes ``output`` whole with one arith.constant scalar: ``linalg.fill``, or
    the linalg.generic linalg-generalize-named-ops makes of it."""
    if op.name not in ("linalg.fill", "linalg.generic") or list(op.operands)[1:] != [output]:
        return False
    if not constant(op.operands[0]) or op.name == "linalg.fill":
        return constant(op.operands[0])
    if has_reduction(op):
        return False
    block = op.regions[0].blocks[0]
    terminator = list(block.operations)[-1]
    out_map = ir.AffineMapAttr(ir.ArrayAttr(op.attributes["indexing_maps"])[1]).value
    return (len(list(block.operations)) == 1 and list(terminator.operands) == [block.arguments[0]]
            and str(out_map) == str(ir.AffineMap.get_identity(out_map.n_dims)))


def constant(value: ir.Value) -> bool:
    return not isinstance(value.owner, ir.Block) and value.owner.name == "arith.constant"


def constant_text(value: ir.Value) -> str:
    return str(value.owner.attributes["value"])
