"""xla-outline-top-k: chlo.top_k kept from the sort its legalization makes."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.helper_calls import call_instead, fresh_symbol
from xlac.passes.lower.builders.top_k_kernel import supported

TOP_K_ATTR = "xla.top_k"
MAX_K = 64                  # beyond this a full sort is no worse


@dataclass(frozen=True)
class OutlineTopK(ModulePass):
    """Replace each `chlo.top_k` (k <= 64, a float or signed integer row) by a
    call of a private declaration marked `xla.top_k = k`, which
    xla-lower-top-k later defines as a one-pass selection.

    Why: chlo-legalize-to-stablehlo turns top_k into a stable sort of every
    row and a slice: O(n log n) comparator calls for k of n results (a k=8
    top-k over 512 rows of 4096 ran 240x slower than XLA). Run before it.
    Example: `chlo.top_k(%x, k = 8)` becomes `call @xla_top_k_0(%x)`.
    """

    name = "xla-outline-top-k"
    max_k: int = MAX_K

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            if op.name == "chlo.top_k" and _fits(op, self.max_k):
                name = fresh_symbol(module, "xla_top_k")
                _declare(module, op, name)
                call_instead(op, name)
                op.erase()


def _fits(op: ir.Operation, max_k: int) -> bool:
    source = ir.RankedTensorType(op.operands[0].type)
    k = ir.IntegerAttr(op.attributes["k"]).value
    return (source.has_static_shape and source.rank >= 1 and supported(str(source.element_type))
            and 0 < k <= min(max_k, source.shape[-1]))


def _declare(module: ir.Operation, op: ir.Operation, name: str) -> None:
    inputs = ", ".join(str(v.type) for v in op.operands)
    results = ", ".join(str(v.type) for v in op.results)
    k = ir.IntegerAttr(op.attributes["k"]).value
    text = f'func.func private @{name}({inputs}) -> ({results}) attributes {{{TOP_K_ATTR} = {k} : i64}}'
    with module.context, op.location:
        declaration = ir.Operation.parse(text)
    ir.InsertionPoint(module.regions[0].blocks[0]).insert(declaration)
