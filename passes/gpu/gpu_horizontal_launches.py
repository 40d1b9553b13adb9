"""xla-gpu-horizontal-launches: independent kernels launched as one."""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass
from xlac.record import record

from .launch_effects import Effects, captured_values, launch_effects
from .launch_groups import dependences, depths, op_effects, order
from .launch_ops import host_blocks

_PLAIN_SEGMENTS = [0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]   # grid and block sizes, nothing else
_LAUNCH_ARGS = 12                                         # block ids, thread ids, grid, block sizes
_ULT, _UGE = 6, 9                                         # arith.cmpi predicates


@dataclass(frozen=True)
class Member:
    """A launch that can be one part of a merged kernel."""
    launch: ir.Operation
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: tuple[ir.Type, ...]          # its workgroup buffers
    shared_bytes: int
    effects: Effects
    captures: frozenset

    @property
    def blocks(self) -> int:
        return math.prod(self.grid)

    @property
    def threads(self) -> int:
        return math.prod(self.block)


@record
class GpuHorizontalLaunches(ModulePass):
    """Run independent `gpu.launch`es as one launch whose blocks are split
    among them (XLA's horizontal loop fusion).

    Why: a training step's optimizer updates one small tensor per parameter,
    each its own kernels of one to a few blocks (the CNN train step's Adam
    update: a kernel for m, one for v, one for the parameter, for each of its
    parameters), and the loss's small reductions beside them; a launch costs
    more than such a kernel's work. The CPU runs each fusion group as a loop
    nest with no launch cost.

    Kernels of one depth in the host block's dependence graph (``launch_groups``:
    buffers compared by the allocation or argument they view; no path between
    two kernels of one depth) and of one thread count a block (any block and
    grid shape) become one launch of 1-D blocks and threads: blocks
    [lo_i, lo_i + blocks_i) run kernel i's body under an `scf.if`, its block and
    thread ids delinearised from the merged ones (x fastest, so warps hold the
    same threads, and a block runs one body whole: its barriers stay uniform).
    The block's ops are reordered so each group's kernels are side by side.
    Caps: the workgroup buffers of a group (all kept) within `max-shared-bytes`
    (the static limit), its captured values (the kernel's parameters) within
    `max-captures`, and a kernel of more than `wave-blocks` blocks (a wave of
    256-thread blocks on 132 SMs) never beside one that stages `tiled-bytes`
    or more a block (the tiled matmul): the merged kernel has the registers of
    its heaviest part, which would set the big loop's occupancy.
    """

    name = "xla-gpu-horizontal-launches"
    acts_on = frozenset({"gpu.launch"})
    max_shared_bytes: int = 48 * 1024
    max_captures: int = 256
    wave_blocks: int = 1056
    tiled_bytes: int = 8192

    def run(self, module: ir.Operation) -> None:
        for block in host_blocks(module):
            self._regroup(block)

    def _regroup(self, block: ir.Block) -> None:
        """Put each group's kernels side by side (``launch_groups.order``), then merge them."""
        ops = [op.operation for op in block.operations]
        if len(ops) < 3:
            return
        ops, terminator = ops[:-1], ops[-1]
        members = [_member(op) for op in ops]
        if sum(m is not None for m in members) < 2:
            return
        effects = [m.effects if m else op_effects(op) for m, op in zip(members, ops)]
        before = dependences(ops, effects)
        weights = [int(op.name == "gpu.launch" or bool(e.reads or e.writes) or e.barrier)
                   for op, e in zip(ops, effects)]
        groups = max((self._groups(members, depths(before, weights, from_end))
                      for from_end in (False, True)),
                     key=lambda found: sum(len(g) - 1 for g in found))
        if not groups:
            return
        node_of = list(range(len(ops)))
        for group in groups:
            for i in group:
                node_of[i] = group[0]
        sequence = order(before, node_of)
        if sequence is None:                 # cannot happen (see launch_groups); stay safe
            return
        for i in sequence:
            ops[i].move_before(terminator)
        for group in groups:
            _merge([members[i] for i in group])

    def _groups(self, members: list[Member | None], depth: list[int]) -> list[list[int]]:
        """Kernels of one depth and thread count, in order, cut where the caps say."""
        by_key: dict[tuple[int, int], list[_Chunk]] = {}
        for i, member in enumerate(members):
            if member is None:
                continue
            chunks = by_key.setdefault((depth[i], member.threads), [_Chunk()])
            if not chunks[-1].takes(member, self):
                chunks.append(_Chunk())
            chunks[-1].add(i, member, self)
        return [c.positions for chunks in by_key.values() for c in chunks if len(c.positions) > 1]


class _Chunk:
    """A group being filled: what the caps need, kept as it grows (linear)."""

    def __init__(self):
        self.positions: list[int] = []
        self.captures: set = set()
        self.shared_bytes = 0
        self.big = self.tiled = False

    def takes(self, member: Member, caps: GpuHorizontalLaunches) -> bool:
        big = self.big or member.blocks > caps.wave_blocks
        tiled = self.tiled or member.shared_bytes >= caps.tiled_bytes
        if big and tiled:
            return False        # a tiled matmul's registers would set a big loop's occupancy
        return self.shared_bytes + member.shared_bytes <= caps.max_shared_bytes and \
            len(self.captures | member.captures) <= caps.max_captures

    def add(self, position: int, member: Member, caps: GpuHorizontalLaunches) -> None:
        self.positions.append(position)
        self.captures |= member.captures
        self.shared_bytes += member.shared_bytes
        self.big |= member.blocks > caps.wave_blocks
        self.tiled |= member.shared_bytes >= caps.tiled_bytes


def _member(op: ir.Operation) -> Member | None:
    """``op`` as a part of a merged launch: a gpu.launch of constant sizes, one block
    in its body, no async tokens, cluster, dynamic or private memory."""
    if op.name != "gpu.launch" or len(op.results) or len(op.regions[0].blocks) != 1:
        return None
    if list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])) != _PLAIN_SEGMENTS:
        return None
    sizes = [_constant(v) for v in op.operands]
    if None in sizes:
        return None
    body = op.regions[0].blocks[0]
    shared_count = ir.IntegerAttr(op.attributes["workgroup_attributions"]).value \
        if "workgroup_attributions" in op.attributes else 0
    if len(body.arguments) != _LAUNCH_ARGS + shared_count:
        return None
    shared = tuple(arg.type for arg in list(body.arguments)[_LAUNCH_ARGS:])
    return Member(op, tuple(sizes[:3]), tuple(sizes[3:]), shared,
                  sum(_bytes(t) for t in shared), launch_effects(op),
                  frozenset(captured_values(op)))


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _bytes(memref: ir.Type) -> int:
    shaped = ir.MemRefType(memref)
    return math.prod(shaped.shape) * max(ir.ShapedType(shaped).element_type.width // 8, 1)


class _Builder:
    """Ops of index arithmetic at an insertion point."""

    def __init__(self, ip: ir.InsertionPoint, location: ir.Location):
        self.ip, self.location = ip, location
        self.index = ir.IndexType.get(location.context)

    def op(self, name: str, operands: list, result: ir.Type | None = None, regions: int = 0,
           **attributes):
        created = ir.Operation.create(name, results=[result] if result else [], operands=operands,
                                      attributes=attributes, regions=regions, loc=self.location,
                                      ip=self.ip)
        return created.results[0] if result else created

    def const(self, n: int) -> ir.Value:
        return self.op("arith.constant", [], self.index, value=ir.IntegerAttr.get(self.index, n))

    def cmp(self, predicate: int, a: ir.Value, b: ir.Value) -> ir.Value:
        i64 = ir.IntegerType.get_signless(64, self.location.context)
        i1 = ir.IntegerType.get_signless(1, self.location.context)
        return self.op("arith.cmpi", [a, b], i1, predicate=ir.IntegerAttr.get(i64, predicate))

    def binary(self, name: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.op(f"arith.{name}", [a, b], self.index)

    def delinearize(self, linear: ir.Value, sizes: tuple[int, int, int]) -> list[ir.Value]:
        """(x, y, z) of ``linear`` over ``sizes``, x fastest (CUDA's order)."""
        x_size, y_size, _ = sizes
        if y_size == 1 and sizes[2] == 1:
            return [linear, self.const(0), self.const(0)]
        x = self.binary("remui", linear, self.const(x_size))
        rest = self.binary("divui", linear, self.const(x_size))
        y = self.binary("remui", rest, self.const(y_size))
        z = self.binary("divui", rest, self.const(y_size))
        return [x, y, z]


def _merge(group: list[Member]) -> None:
    """One launch in place of ``group``'s, at the last one's place."""
    last = group[-1].launch
    location = last.location
    host = _Builder(ir.InsertionPoint(last), location)
    sizes = [sum(m.blocks for m in group), 1, 1, group[0].threads, 1, 1]
    shared = [t for m in group for t in m.shared]
    i64 = ir.IntegerType.get_signless(64, location.context)
    launch = host.op("gpu.launch", [host.const(n) for n in sizes], regions=1,
                     operandSegmentSizes=last.attributes["operandSegmentSizes"],
                     workgroup_attributions=ir.IntegerAttr.get(i64, len(shared)))
    with location:
        body = launch.regions[0].blocks.append(*([host.index] * _LAUNCH_ARGS + shared))
    _fill_body(body, group)
    for member in group:
        member.launch.erase()


def _fill_body(body: ir.Block, group: list[Member]) -> None:
    """Launch i's body under `blocks in [lo_i, hi_i)`, its ids and sizes remade."""
    location = group[-1].launch.location
    at_end = _Builder(ir.InsertionPoint(body), location)
    block_id, thread_id = body.arguments[0], body.arguments[3]
    low, shared_at = 0, _LAUNCH_ARGS
    for member in group:
        high = low + member.blocks
        below = at_end.cmp(_ULT, block_id, at_end.const(high))
        inside = below if low == 0 else at_end.op(
            "arith.andi", [at_end.cmp(_UGE, block_id, at_end.const(low)), below], below.type)
        branch = at_end.op("scf.if", [inside], regions=2)
        then = branch.regions[0].blocks.append()
        end = ir.Operation.create("scf.yield", results=[], operands=[], loc=location,
                                  ip=ir.InsertionPoint(then))
        part = _Builder(ir.InsertionPoint(end), location)
        local_block = part.binary("subi", block_id, part.const(low)) if low else block_id
        ids = part.delinearize(local_block, member.grid) + part.delinearize(thread_id, member.block)
        dims = [part.const(n) for n in member.grid + member.block]
        old = member.launch.regions[0].blocks[0]
        for op in list(old.operations)[:-1]:                 # all but its gpu.terminator
            op.operation.move_before(end)
        replacements = ids + dims + list(body.arguments)[shared_at:shared_at + len(member.shared)]
        for arg, new in zip(old.arguments, replacements):
            arg.replace_all_uses_with(new)
        shared_at += len(member.shared)
        low = high
    ir.Operation.create("gpu.terminator", results=[], operands=[], loc=location,
                        ip=ir.InsertionPoint(body))
