"""xla-own-empties: the writers of a shared tensor.empty share it in windows, not all at once."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.record import record


@record
class OwnEmpties(ModulePass):
    """Before bufferization, give each run of ``group`` users (in program
    order) of a `tensor.empty` with more than ``group`` users a clone of it
    of their own, right before it (so it dominates them all, in loops or not).

    Why: CSE leaves one `tensor.empty` per type for the whole program, and
    every `linalg.fill` of that type writes into it. One-shot bufferization
    then checks each of those writes against every other use of the empty's
    aliases: on the CUDA target, where the program stays one function, a
    2,000-op transpose/dot chain (1,000 fills into one empty) took 322 s to
    bufferize. Why windows rather than an empty per writer: writers that
    share an empty and are not alive at once share one buffer (BERT's host
    function: 88 buffers, 154 with an empty per writer); 32 keeps that and
    bounds the analysis. Example, ``group=2``:

        %e = tensor.empty() : tensor<4xf32>
        %a = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
        %b = linalg.fill ins(%c1 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
        %c = linalg.fill ins(%c2 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      ->
        %e1 = tensor.empty() : tensor<4xf32>
        %e = tensor.empty() : tensor<4xf32>
        %a = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
        %b = linalg.fill ins(%c1 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
        %c = linalg.fill ins(%c2 : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
    """

    name = "xla-own-empties"
    group: int = 32

    def run(self, module: ir.Operation) -> None:
        ops = module_ops(module)
        position = {op: index for index, op in enumerate(ops)}   # pre-order: program order
        for op in ops:
            if op.name != "tensor.empty":
                continue
            uses = list(op.results[0].uses)
            if len(uses) <= self.group:
                continue
            uses.sort(key=lambda use: position.get(use.owner.operation, len(position)))
            for start in range(self.group, len(uses), self.group):
                fresh = op.clone(ip=ir.InsertionPoint(op)).results[0]
                for use in uses[start:start + self.group]:
                    use.owner.operation.operands[use.operand_number] = fresh
