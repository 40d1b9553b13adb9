"""xla-gpu-own-launch-constants: each gpu.launch reads constants of its own."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops


class GpuOwnLaunchConstants(ModulePass):
    """Give each `gpu.launch` a copy, right before it, of every `arith.constant`
    its body reads from outside.

    Why: `gpu-launch-sink-index-computations` moves such constants into each
    launch and replaces their uses in its region by walking every use of the
    constant, and CSE left one `%c0`, `%c1`, ... for the whole host function,
    read by every launch: quadratic in launches (2,000 transpose/dot ops:
    5.9 s, 0.14 s at 500). With a copy per launch each walk is that launch's
    own uses; the copies outside are sunk and die as before.

        %c1 = arith.constant 1 : index
        gpu.launch ... { ... %c1 ... }
        gpu.launch ... { ... %c1 ... }
      ->
        %c1 = arith.constant 1 : index
        %c1_0 = arith.constant 1 : index
        gpu.launch ... { ... %c1_0 ... }
        %c1_1 = arith.constant 1 : index
        gpu.launch ... { ... %c1_1 ... }
    """

    name = "xla-gpu-own-launch-constants"

    def run(self, module: ir.Operation) -> None:
        for launch in [op for op in nested_ops(module) if op.name == "gpu.launch"]:
            inside = nested_ops(launch)
            own = set(inside)
            copies: dict[ir.Operation, ir.Value] = {}
            for op in inside:
                for index, value in enumerate(op.operands):
                    owner = value.owner
                    if isinstance(owner, ir.Block) or owner.name != "arith.constant" \
                            or owner.operation in own:
                        continue
                    if owner.operation not in copies:
                        copies[owner.operation] = owner.operation.clone(
                            ip=ir.InsertionPoint(launch)).results[0]
                    op.operands[index] = copies[owner.operation]
