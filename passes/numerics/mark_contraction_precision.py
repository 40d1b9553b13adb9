"""xla-mark-contraction-precision: a dot's precision_config carried to its matmul."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

PRECISION = "xla.precision"


class MarkContractionPrecision(ModulePass):
    """Mark each f32 `dot_general` whose precision_config asks for HIGHEST on
    either operand with `xla.precision = "highest"`; the linalg lowering and
    xla-normalize-contractions carry the mark to the matmul.

    Why: a target that computes matmuls with cuBLASLt computes f32 dots as XLA
    does on a GPU, in TF32 at DEFAULT and HIGH precision and in full f32 at
    HIGHEST (jax's `precision="highest"`); the lowering to linalg drops
    precision_config, a discardable attribute it keeps.
    """

    name = "xla-mark-contraction-precision"

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.dot_general" and "precision_config" in op.attributes \
                    and "HIGHEST" in str(op.attributes["precision_config"]):
                op.attributes[PRECISION] = ir.StringAttr.get("highest")
