"""xla-combine-all-reduces: all-reduces of independent tensors as one all-reduce
of their concatenation, up to a size (XLA's all-reduce combiner)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xlac.dtypes import tensor_type
from xlac.mlir import ir, stablehlo
from xlac.passes.base import ModulePass, ancestor_in_block, module_ops
from xlac.passes.helper_calls import fresh_symbol
from xlac.passes.lower.builders.collective_groups import REDUCTIONS, reduction_of
from xlac.record import record

_BODY_OP = {kind: name for name, kind in REDUCTIONS.items()}


@record
class CombineAllReduces(ModulePass):
    """Replace all-reduces that could run at the same point (none needs
    another's result, and each one's operand is made before any of them is
    used) and agree on groups, channel, reduction and element type by one
    all-reduce of their operands flattened and concatenated, its result
    sliced back, as long as the bucket holds at most ``bucket_bytes``.

    Why: each collective pays a latency (MPI's synchronisation, a few
    microseconds within a host, more across hosts) besides its bytes; a
    training step's many small gradients (biases, norms) pay it once per
    bucket. The price: the copies into and out of the bucket, and a bucket
    starts only when its last member's operand is ready, so less of it
    overlaps the backward pass. Off (0) unless asked for: docs/distributed.md
    has the measurements. Example (bucket-bytes >= 8 KiB):

        %a = all_reduce(%ga) : tensor<1024xf32>;  %b = all_reduce(%gb) : tensor<1024xf32>
      becomes
        %c = all_reduce(concatenate(reshape %ga, reshape %gb)) : tensor<2048xf32>
        %a = reshape(slice %c [0:1024]);  %b = reshape(slice %c [1024:2048])
    """

    name = "xla-combine-all-reduces"
    bucket_bytes: int = 0

    def run(self, module: ir.Operation) -> None:
        if self.bucket_bytes <= 0:
            return
        blocks = []
        for op in module_ops(module):
            if op.name == "stablehlo.all_reduce" and op.block not in blocks:
                blocks.append(op.block)
        for block in blocks:
            for bucket in _buckets(block, self.bucket_bytes):
                if len(bucket.members) > 1:
                    _combine(module, bucket)


@dataclass
class _Bucket:
    key: tuple
    members: list = field(default_factory=list)
    bytes: int = 0
    latest_operand: int = -1          # block position of the last member operand's maker
    first_use: int = 1 << 62          # block position of the first use of any member
    first_user: ir.Operation | None = None


def _buckets(block: ir.Block, limit: int) -> list[_Bucket]:
    order = {op.operation: i for i, op in enumerate(block.operations)}
    open_buckets: dict[tuple, _Bucket] = {}
    done: list[_Bucket] = []
    for op in [o.operation for o in block.operations]:
        key = _key(op)
        if key is None:
            continue
        size = _bytes(op)
        made = _position(op.operands[0].owner, block, order)
        users = [u for u in (ancestor_in_block(use.owner, block) for use in op.results[0].uses) if u]
        if not users:
            continue
        first_user = min(users, key=lambda u: order[u])
        bucket = open_buckets.get(key)
        fits = bucket is not None and bucket.bytes + size <= limit and \
            made < bucket.first_use and order[first_user] > bucket.latest_operand
        if not fits:
            if bucket is not None:
                done.append(bucket)
            bucket = open_buckets[key] = _Bucket(key)
        bucket.members.append(op)
        bucket.bytes += size
        bucket.latest_operand = max(bucket.latest_operand, made)
        if order[first_user] < bucket.first_use:
            bucket.first_use, bucket.first_user = order[first_user], first_user
    return done + list(open_buckets.values())


def _key(op: ir.Operation):
    """What members of one bucket must share, or None for an all-reduce this pass leaves."""
    if op.name != "stablehlo.all_reduce" or len(op.operands) != 1:
        return None
    tensor = ir.RankedTensorType(op.operands[0].type)
    if not tensor.has_static_shape:
        return None
    reduction = reduction_of(op)
    if reduction is None:
        return None
    # channel ids differ between ops; what they mean (the group strategy) is
    # their presence and type, with replica_groups and use_global_device_ids
    attrs = tuple(sorted((name, str(op.attributes[name])) for name in op.attributes
                         if name != "channel_handle"))
    channel = stablehlo.ChannelHandle(op.attributes["channel_handle"]).channel_type \
        if "channel_handle" in op.attributes else None
    return attrs, channel, reduction, str(tensor.element_type)


def _bytes(op: ir.Operation) -> int:
    tensor = ir.RankedTensorType(op.operands[0].type)
    bits = tensor.element_type.width if hasattr(tensor.element_type, "width") else 32
    return math.prod(tensor.shape) * max(bits // 8, 1)


def _position(owner, block: ir.Block, order: dict) -> int:
    op = ancestor_in_block(owner, block)
    return order[op] if op is not None else -1



def _combine(module: ir.Operation, bucket: _Bucket) -> None:
    """One call of a helper that concatenates, all-reduces and slices, placed
    right before the first use of any member (every operand is made by then)."""
    members = bucket.members
    name = fresh_symbol(module, "__xlac_all_reduce_bucket")
    text = _helper_text(name, members)
    parsed = ir.Module.parse("module {\n" + text + "}", context=module.context)
    helper = [o.operation for o in parsed.body.operations][0]
    helper.move_after(_top_level(members[0]))
    types = [m.results[0].type for m in members]
    with members[0].location, ir.InsertionPoint(bucket.first_user):
        call = ir.Operation.create("func.call", results=types,
                                   operands=[m.operands[0] for m in members],
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
    for index, member in enumerate(members):
        member.results[0].replace_all_uses_with(call.results[index])
        member.erase()


def _top_level(op: ir.Operation) -> ir.Operation:
    while op.parent is not None and op.parent.name != "builtin.module":
        op = op.parent.operation
    return op


def _helper_text(name: str, members: list) -> str:
    first = members[0]
    element = str(ir.RankedTensorType(first.operands[0].type).element_type)
    sizes = [math.prod(ir.RankedTensorType(m.operands[0].type).shape) for m in members]
    total = sum(sizes)
    flat = tensor_type([total], element)
    lines, pieces = [], []
    for i, member in enumerate(members):
        lines.append(f"%f{i} = stablehlo.reshape %a{i} : ({member.operands[0].type}) -> "
                     f"{tensor_type([sizes[i]], element)}")
        pieces.append(f"%f{i}")
    piece_types = ", ".join(tensor_type([n], element) for n in sizes)
    lines.append(f"%c = stablehlo.concatenate {', '.join(pieces)}, dim = 0 : ({piece_types}) -> {flat}")
    attrs = ", ".join(f"{n} = {first.attributes[n]}" for n in first.attributes)
    scalar = tensor_type([], element)
    lines.append(f'%r = "stablehlo.all_reduce"(%c) <{{{attrs}}}> ({{\n'
                 f"  ^bb0(%x: {scalar}, %y: {scalar}):\n"
                 f"    %s = {_BODY_OP[reduction_of(first)]} %x, %y : {scalar}\n"
                 f"    stablehlo.return %s : {scalar}\n"
                 f"  }}) : ({flat}) -> {flat}")
    offset, results = 0, []
    for i, member in enumerate(members):
        piece = tensor_type([sizes[i]], element)
        lines.append(f"%s{i} = stablehlo.slice %r [{offset}:{offset + sizes[i]}] : ({flat}) -> {piece}")
        lines.append(f"%o{i} = stablehlo.reshape %s{i} : ({piece}) -> {member.results[0].type}")
        results.append(f"%o{i}")
        offset += sizes[i]
    args = ", ".join(f"%a{i}: {m.operands[0].type}" for i, m in enumerate(members))
    types = ", ".join(str(m.results[0].type) for m in members)
    body = "".join(f"  {line}\n" for line in lines)
    return (f"func.func private @{name}({args}) -> ({types}) {{\n{body}"
            f"  return {', '.join(results)} : {types}\n}}\n")
