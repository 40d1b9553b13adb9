"""Which processes a StableHLO collective talks to, as groups of MPI ranks.

The spec splits the replica x partition grid into process groups in one of
four ways, chosen by the op, its channel and ``use_global_device_ids``
(StableHLO spec, "Parallel execution"). One process runs each device and
its rank is ``replica * num_partitions + partition``, so every strategy
becomes a list of groups of ranks; the order inside a group is the order
the op sees its members in (all_gather concatenates in that order).
"""

from __future__ import annotations

import numpy as np

from xlac.mlir import ir, stablehlo
from xlac.spmd.grid import DeviceGrid

# op -> how it reads replica_groups when it has a channel (without one: cross_replica)
_WITH_CHANNEL = {"all_reduce": "global_ids", "all_gather": "global_ids",
                 "reduce_scatter": "global_ids", "all_to_all": "cross_partition",
                 "collective_broadcast": "cross_partition",
                 "collective_permute": "cross_partition"}


def strategy(kind: str, op: ir.Operation) -> str:
    """cross_replica, cross_partition, cross_replica_and_partition or flattened_ids."""
    if channel_id(op) <= 0:
        return "cross_replica"
    mode = _WITH_CHANNEL[kind]
    if mode == "global_ids":
        return "flattened_ids" if "use_global_device_ids" in op.attributes \
            else "cross_replica_and_partition"
    return mode


def channel_id(op: ir.Operation) -> int:
    if "channel_handle" not in op.attributes:
        return 0
    return stablehlo.ChannelHandle(op.attributes["channel_handle"]).handle


def int_table(op: ir.Operation, name: str) -> np.ndarray | None:
    """A dense i64 attribute as a 2-D array (None when absent or empty)."""
    if name not in op.attributes:
        return None
    values = np.array(ir.DenseIntElementsAttr(op.attributes[name]), dtype=np.int64)
    return values if values.size else None


def process_groups(kind: str, op: ir.Operation, grid: DeviceGrid) -> list[list[int]]:
    """The op's groups of ranks, each in the op's order."""
    mode = strategy(kind, op)
    groups = int_table(op, "replica_groups")
    if groups is None:                        # empty: one group of every replica/partition
        count = {"cross_partition": grid.partitions, "flattened_ids": grid.size}.get(mode, grid.replicas)
        groups = np.arange(count).reshape(1, -1)
    groups = groups.reshape(len(groups), -1).tolist()
    R, P = grid.replicas, grid.partitions
    if mode == "flattened_ids":
        return groups
    if mode == "cross_replica":
        return [[r * P + p for r in group] for group in groups for p in range(P)]
    if mode == "cross_partition":
        return [[r * P + p for p in group] for group in groups for r in range(R)]
    return [[r * P + p for p in range(P) for r in group] for group in groups]


def permute_pairs(op: ir.Operation, grid: DeviceGrid) -> list[list[int]]:
    """collective_permute's (source, target) pairs as ranks, within each replica
    (with a channel) or each partition (without)."""
    pairs = int_table(op, "source_target_pairs")
    pairs = [] if pairs is None else pairs.reshape(-1, 2).tolist()
    R, P = grid.replicas, grid.partitions
    if strategy("collective_permute", op) == "cross_partition":
        return [[r * P + s, r * P + t] for s, t in pairs for r in range(R)]
    return [[s * P + p, t * P + p] for s, t in pairs for p in range(P)]


def check_groups(groups: list[list[int]], grid: DeviceGrid) -> str | None:
    """Why these groups cannot run on ``grid`` (None if they can)."""
    flat = [rank for group in groups for rank in group]
    if len({len(g) for g in groups}) > 1:
        return "replica groups of different sizes"
    if len(set(flat)) != len(flat):
        return "a device appears in two replica groups"
    if any(rank < 0 or rank >= grid.size for rank in flat):
        return f"a replica group names a device outside the {grid}"
    return None


# the reduction bodies MPI has built-in operations for
REDUCTIONS = {"stablehlo.add": "add", "stablehlo.multiply": "mul", "stablehlo.minimum": "min",
              "stablehlo.maximum": "max", "stablehlo.and": "and", "stablehlo.or": "or",
              "stablehlo.xor": "xor"}


def reduction_of(op: ir.Operation) -> str | None:
    """The reduction a body computes (``add``, ``mul``, ...), or None if it is
    anything but one such op applied to its two arguments."""
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    if len(ops) != 2 or ops[0].name not in REDUCTIONS:
        return None
    combine, returned = ops
    arguments = list(block.arguments)
    if sorted(map(_argument_number, combine.operands)) != [0, 1] or \
            list(returned.operands) != [combine.result] or len(arguments) != 2:
        return None
    return REDUCTIONS[combine.name]


def _argument_number(value: ir.Value) -> int:
    return ir.BlockArgument(value).arg_number if isinstance(value.owner, ir.Block) else -1
