"""What every layer knows about SPMD programs: the collective ops, and the
device grid a program runs on (``mhlo.num_replicas`` x ``mhlo.num_partitions``).

One process runs one device; its MPI rank is replica x num_partitions +
partition, as StableHLO numbers devices (docs/distributed.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlac.record import record

if TYPE_CHECKING:                 # the bindings load on first use: a cache hit needs none
    from xlac.mlir import ir


# StableHLO ops that talk to other devices, or ask which device this is.
COLLECTIVE_OPS = ("stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.reduce_scatter",
                  "stablehlo.all_to_all", "stablehlo.collective_permute",
                  "stablehlo.collective_broadcast")
ID_OPS = ("stablehlo.replica_id", "stablehlo.partition_id")
SPMD_OPS = COLLECTIVE_OPS + ID_OPS

REPLICAS_ATTR, PARTITIONS_ATTR = "mhlo.num_replicas", "mhlo.num_partitions"


@record
class DeviceGrid:
    """The devices an SPMD program runs on: one process each."""

    replicas: int = 1
    partitions: int = 1

    @property
    def size(self) -> int:
        return self.replicas * self.partitions

    def __str__(self) -> str:
        return (f"{self.replicas} replica(s) x {self.partitions} partition(s) = "
                f"{self.size} process(es)")


def declared_grid(module: ir.Operation) -> DeviceGrid:
    """The grid the module's attributes declare (1 x 1 when they say nothing)."""
    from xlac.mlir import ir
    attributes = module.attributes
    def read(name: str) -> int:
        return ir.IntegerAttr(attributes[name]).value if name in attributes else 1
    return DeviceGrid(read(REPLICAS_ATTR), read(PARTITIONS_ATTR))


def spmd_ops(module: ir.Operation) -> list[ir.Operation]:
    """Every collective or id op nested in ``module``."""
    from xlac.mlir import ir
    found = []

    def visit(op):
        if op.name in SPMD_OPS:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def program_grid(module: ir.Operation) -> DeviceGrid | None:
    """The grid of an SPMD program (one with collectives, ids or several
    devices); None for a plain single-device program."""
    grid = declared_grid(module)
    if grid.size > 1 or spmd_ops(module):
        return grid
    return None
