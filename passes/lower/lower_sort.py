"""xla-lower-sort: stablehlo.sort as a merge sort in scf loops on tensors."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, nested_ops
from xlac.passes.helper_calls import captured_values, fresh_symbol, region_declaration, replace_with_call
from xlac.passes.lower.builders.sort_kernel import SortSignature, helper_text


@dataclass(frozen=True)
class LowerSort(ModulePass):
    """Replace each `stablehlo.sort` by a call to a generated merge-sort helper.

    Why: upstream stablehlo-legalize-to-linalg has no pattern for sort. The
    helper (see sort_kernel.py) views the operands as [rows, n] with the sort
    dimension last and merge-sorts each row, moving every operand's elements
    together. The sort's comparator region becomes a private
    function on 0-d tensors that the helper calls; the `inline` pass that
    follows puts it back in the loops. Outside values the comparator uses
    (constants CSE hoisted) travel as extra arguments. The merge is stable, so `is_stable`
    holds whatever its value, and NaN order is whatever the comparator says.

    Example:
        %r = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({...}) : ...
    becomes
        %r = call @xla_sort_0(%x) : (tensor<5xf32>) -> tensor<5xf32>
    """

    name = "xla-lower-sort"

    acts_on = frozenset({"stablehlo.sort"})

    def run(self, module: ir.Operation) -> None:
        for op in [o for o in nested_ops(module) if o.name == "stablehlo.sort"]:
            captures = captured_values(op)
            sig = _signature(op, fresh_symbol(module, "xla_sort"), captures)
            text = helper_text(sig) + region_declaration(op.regions[0], sig.comparator, captures)
            replace_with_call(module, op, text, sig.name, {sig.comparator: op.regions[0]},
                              captures)


def _signature(op: ir.Operation, helper: str, captures: list[ir.Value]) -> SortSignature:
    types = [ir.RankedTensorType(v.type) for v in op.operands]
    if any(not t.has_static_shape for t in types):
        raise PassFailure(op.location, "stablehlo.sort with dynamic shapes is not supported; "
                          "run stablehlo-refine-shapes first")
    dimension = ir.IntegerAttr(op.attributes["dimension"]).value
    rank = len(types[0].shape)
    if dimension < 0:
        dimension += rank
    if not 0 <= dimension < rank:
        raise PassFailure(op.location, f"sort dimension {dimension} is out of range "
                          f"for rank {rank}")
    return SortSignature(helper, tuple(types[0].shape),
                         tuple(str(t.element_type) for t in types), dimension,
                         tuple(str(v.type) for v in captures))
