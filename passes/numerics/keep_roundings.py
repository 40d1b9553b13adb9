"""xla-keep-roundings: every bf16, f16 and f8 op's result rounded to its type."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

_CONVERSIONS = ("arith.extf", "arith.truncf")


class KeepRoundings(ModulePass):
    """Take the `contract` flag off the conversions that
    `arith-emulate-unsupported-floats` and `math-extend-to-supported-types`
    put around the arithmetic of narrow floats (bf16, f16 without F16C, f8),
    which they do in f32.

    Why: with the flag, MLIR folds `extf(truncf(x))` to `x`, so a chain of
    bf16 ops ran in f32 and was rounded once, at the end: in bf16,
    (1 + 2^-8) + 2^-8 came out 1.0078. StableHLO, its interpreter and XLA
    round every op's result to its type: 1 + 2^-8 is 1, and so is the sum.

        %4 = arith.truncf %3 fastmath<contract> : f32 to bf16
        %5 = arith.extf %4 fastmath<contract> : bf16 to f32
      ->
        %4 = arith.truncf %3 : f32 to bf16
        %5 = arith.extf %4 : bf16 to f32
    """

    name = "xla-keep-roundings"

    acts_on = frozenset(_CONVERSIONS)

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name in _CONVERSIONS and "fastmath" in op.attributes:
                del op.attributes["fastmath"]
