"""xla-own-empties: each op writing into a shared tensor.empty gets one of its own."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops


@dataclass(frozen=True)
class OwnEmpties(ModulePass):
    """Before bufferization, give every user of a `tensor.empty` that has
    several a clone of it, right before the user.

    Why: CSE leaves one `tensor.empty` per type for the whole program, and
    every `linalg.fill` of that type writes into it. One-shot bufferization
    then checks each of those writes against every other use of the empty's
    aliases: on the CUDA target, where the program stays one function, a
    2,000-op transpose/dot chain (1,000 fills into one empty) took 322 s to
    bufferize. Each write already needs a buffer of its own (the fills'
    results are alive at once), so nothing is allocated that was not before.

        %e = tensor.empty() : tensor<4xf32>
        %a = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
        %b = linalg.fill ins(%c1 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      ->
        %e0 = tensor.empty() : tensor<4xf32>
        %a = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
        %e1 = tensor.empty() : tensor<4xf32>
        %b = linalg.fill ins(%c1 : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
    """

    name = "xla-own-empties"

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            if op.name != "tensor.empty":
                continue
            uses = list(op.results[0].uses)
            if len(uses) < 2:
                continue
            for use in uses:
                user = use.owner.operation
                fresh = op.clone(ip=ir.InsertionPoint(user))
                user.operands[use.operand_number] = fresh.results[0]
            op.erase()
