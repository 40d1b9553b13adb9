"""xla-lower-collectives: StableHLO collectives -> calls that move buffers."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.helper_calls import fresh_symbol, replace_with_call
from xlac.passes.lower.builders import collective_groups as groups_of
from xlac.passes.lower.builders.collective_text import Transfer, helper_text
from xlac.spmd.grid import SPMD_OPS, DeviceGrid, declared_grid


class LowerCollectives(ModulePass):
    """Replace each collective (and replica_id/partition_id) by a call that
    moves buffers: `@__xlac_collective_N(send, recv)`, a declaration whose
    attributes say what to do (`xla.collective`, `xla.groups` as ranks,
    `xla.reduction`, `xla.element_type`).

    Why: the targets run collectives with library calls on buffers (MPI on
    CPUs, NCCL on GPUs), so the op becomes the buffers such a call reads and
    writes, reshaped so that every rank's block is contiguous: all_gather
    and all_to_all move whole blocks, reduce_scatter reduces them. The
    declaration keeps the op's meaning through bufferization as a plain call
    on memrefs (its buffers live until it returns); the CPU pipeline turns it
    into the MPI call (xla-collectives-to-mpi), the CUDA runtime into NCCL.
    Process groups follow the spec's strategies for the module's
    mhlo.num_replicas x mhlo.num_partitions grid. Example:

        %r = "stablehlo.all_reduce"(%x) ({ add }) {replica_groups = dense<[[0, 1]]>, ...}
      becomes
        %r = call @__xlac_all_reduce_0(%x)   // to_buffer %x, alloc %out,
                                             // call @__xlac_collective_0(%in, %out)
    """

    name = "xla-lower-collectives"

    acts_on = frozenset(SPMD_OPS)

    def run(self, module: ir.Operation) -> None:
        grid = declared_grid(module)
        for op in [op for op in module_ops(module) if op.name in SPMD_OPS]:
            kind = op.name.split(".", 1)[1]
            stem = fresh_symbol(module, f"__xlac_{kind}")
            transfers = _TRANSFERS[kind](op, grid)
            for index, transfer in enumerate(transfers):
                transfer.callee = f"{stem}_buffers{index}"
            text = helper_text(stem, op, transfers)          # fixes the buffer shapes
            text += "\n".join(t.declaration(t.callee) for t in transfers)
            replace_with_call(module, op, "module {\n" + text + "\n}", stem)


def _shape(value: ir.Value) -> tuple[list[int], str]:
    tensor = ir.RankedTensorType(value.type)
    return list(tensor.shape), str(tensor.element_type)


def _groups(kind: str, op: ir.Operation, grid: DeviceGrid) -> list[list[int]]:
    groups = groups_of.process_groups(kind, op, grid)
    problem = groups_of.check_groups(groups, grid)
    if problem:
        raise PassFailure(op.location, f"'{op.name}': {problem}")
    return groups


def _reduction(op: ir.Operation) -> str:
    reduction = groups_of.reduction_of(op)
    if reduction is None:
        raise PassFailure(op.location, f"'{op.name}' reduces with a body xlac cannot pass to "
                          "MPI or NCCL: it must be one stablehlo.add, multiply, minimum, "
                          "maximum, and, or or xor of its two arguments")
    _, element = _shape(op.operands[0])
    if element.startswith("complex") and reduction not in ("add", "mul"):
        raise PassFailure(op.location, f"'{op.name}': MPI and NCCL have no {reduction} of "
                          "complex numbers (only add and multiply)")
    if element.startswith(("f", "bf", "complex")) and reduction in ("and", "or", "xor"):
        raise PassFailure(op.location, f"'{op.name}': bitwise {reduction} of {element}")
    return reduction


def _all_reduce(op, grid):
    groups, reduction = _groups("all_reduce", op, grid), _reduction(op)
    transfers = []
    for value in op.operands:
        shape, element = _shape(value)
        transfers.append(Transfer("all_reduce", element, shape, shape, groups=groups,
                                  reduction=reduction))
    return transfers


def _all_gather(op, grid):
    groups = _groups("all_gather", op, grid)
    dim = ir.IntegerAttr(op.attributes["all_gather_dim"]).value
    transfers = []
    for value in op.operands:
        shape, element = _shape(value)
        transfers.append(Transfer("all_gather", element, shape, [len(groups[0])] + shape,
                                  groups=groups, gather_into=dim))
    return transfers


def _reduce_scatter(op, grid):
    groups, reduction = _groups("reduce_scatter", op, grid), _reduction(op)
    dim = ir.IntegerAttr(op.attributes["scatter_dimension"]).value
    shape, element = _shape(op.operands[0])
    result, _ = _shape(op.results[0])
    return [Transfer("reduce_scatter", element, shape, result, groups=groups,
                     reduction=reduction, split_from=dim)]


def _all_to_all(op, grid):
    groups = _groups("all_to_all", op, grid)
    split = ir.IntegerAttr(op.attributes["split_dimension"]).value
    concat = ir.IntegerAttr(op.attributes["concat_dimension"]).value
    count = ir.IntegerAttr(op.attributes["split_count"]).value
    if count != len(groups[0]):
        raise PassFailure(op.location, f"'{op.name}': split_count {count} differs from the "
                          f"replica group size {len(groups[0])}")
    transfers = []
    for value in op.operands:
        shape, element = _shape(value)
        transfers.append(Transfer("all_to_all", element, shape, shape, groups=groups,
                                  split_from=split, gather_into=concat))
    return transfers


def _collective_permute(op, grid):
    shape, element = _shape(op.operands[0])
    pairs = groups_of.permute_pairs(op, grid)
    return [Transfer("collective_permute", element, shape, shape, pairs=pairs)]


def _collective_broadcast(op, grid):
    shape, element = _shape(op.operands[0])
    return [Transfer("collective_broadcast", element, shape, shape,
                     groups=_groups("collective_broadcast", op, grid))]


def _device_id(kind):
    def transfers(op, grid):
        return [Transfer(kind, "ui32", None, [])]
    return transfers


_TRANSFERS = {"all_reduce": _all_reduce, "all_gather": _all_gather,
              "reduce_scatter": _reduce_scatter, "all_to_all": _all_to_all,
              "collective_permute": _collective_permute,
              "collective_broadcast": _collective_broadcast,
              "replica_id": _device_id("replica_id"), "partition_id": _device_id("partition_id")}
