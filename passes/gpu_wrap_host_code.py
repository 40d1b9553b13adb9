"""xla-gpu-wrap-host-code: sequential host code -> a one-iteration scf.parallel."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, functions

# Ops the GPU host schedule executes itself (xlac.cuda_schedule): everything
# else touches buffer contents and must run on the device.
HOST_OPS = frozenset({
    "arith.constant", "memref.alloc", "memref.dealloc", "memref.copy", "memref.subview",
    "memref.expand_shape", "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast",
    "scf.parallel", "func.return",
})


@dataclass(frozen=True)
class GpuWrapHostCode(ModulePass):
    """Wrap each run of sequential host ops in a 1-trip scf.parallel (a 1x1 kernel).

    Why: work with no parallel dimension (a full reduction to a 0-d buffer,
    a scalar store) produces no scf.parallel, so convert-parallel-loops-to-gpu
    would leave it in the host function, which then reads device memory on
    the CPU. Run it after scf-parallel-loop-tiling and before anything that
    canonicalizes (canonicalize deletes 1-trip loops). Example:

        scf.for ... { memref.load %arg0 ... }   ->   scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
                                                        scf.for ... { memref.load %arg0 ... } }
    """

    name = "xla-gpu-wrap-host-code"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            if func.regions[0].blocks:
                for run in _sequential_runs(func.regions[0].blocks[0]):
                    _wrap(run)


def _sequential_runs(block) -> list[list[ir.Operation]]:
    runs, current, folded = [], [], set()
    for op in block.operations:
        op = op.operation
        if _folds_to_constant(op, folded):            # tile sizes: c1 * c16; canonicalize folds them later
            folded.update(op.results)
            continue
        if op.name in HOST_OPS:
            if current:
                runs.append(current)
                current = []
            continue
        current.append(op)
    if current:
        runs.append(current)
    return runs


def _folds_to_constant(op: ir.Operation, folded: set) -> bool:
    if op.name == "arith.constant":
        return True
    return op.name.startswith("arith.") and all(value in folded for value in op.operands)


def _wrap(run: list[ir.Operation]) -> None:
    members = set(run)
    for op in run:
        for result in op.results:
            if any(use.owner not in members for use in result.uses):
                raise PassFailure(op.location, f"'{op.name}' computes a value the GPU host "
                                  "code needs; host-side scalar code is not supported on cuda")
    with run[0].context, run[0].location, ir.InsertionPoint(run[0]):
        index = ir.IndexType.get()
        bounds = [ir.Operation.create("arith.constant", results=[index],
                                      attributes={"value": ir.IntegerAttr.get(index, v)}).result
                  for v in (0, 1)]
        loop = ir.Operation.create(
            "scf.parallel", operands=[bounds[0], bounds[1], bounds[1]], regions=1,
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1, 0])})
        body = loop.regions[0].blocks.append(index)
    with run[0].context, run[0].location, ir.InsertionPoint(body):
        terminator = ir.Operation.create("scf.reduce", operands=[])
    for op in run:
        op.move_before(terminator)
