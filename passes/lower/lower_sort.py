"""xla-lower-sort: stablehlo.sort as a merge sort in scf loops on tensors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.helper_calls import captured_values, fresh_symbol, region_declaration, replace_with_call
from xlac.record import record

if TYPE_CHECKING:
    from xlac.passes.lower.builders.sort_kernel import SortSignature
    from xlac.passes.lower.builders.sort_radix import RadixKey

# The sort builders are imported where a sort is lowered, not with the pass: the
# pipeline imports every pass, and most programs have no sort (3-5 ms of a
# process's first compile; the op census skips ``run`` without one).


@record
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

    # rows on the CPU's threads (scf.forall); off where a target maps no scf.forall (CUDA)
    parallel_rows: bool = False

    acts_on = frozenset({"stablehlo.sort"})

    def run(self, module: ir.Operation) -> None:
        from xlac.passes.lower.builders.sort_kernel import helper_text
        for op in [o for o in module_ops(module) if o.name == "stablehlo.sort"]:
            captures = captured_values(op)
            sig = _signature(op, fresh_symbol(module, "xla_sort"), captures, self.parallel_rows)
            if sig.radix is not None:       # the comparator is read, never called
                replace_with_call(module, op, helper_text(sig), sig.name)
                continue
            text = helper_text(sig) + region_declaration(op.regions[0], sig.comparator, captures)
            replace_with_call(module, op, text, sig.name, {sig.comparator: op.regions[0]},
                              captures)


def _signature(op: ir.Operation, helper: str, captures: list[ir.Value],
               parallel: bool) -> SortSignature:
    from xlac.passes.lower.builders.sort_kernel import SortSignature
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
                         tuple(str(v.type) for v in captures), parallel,
                         None if captures else radix_key(op))


def radix_key(op: ir.Operation) -> RadixKey | None:
    """The key a radix sort can sort by, if the comparator is just `a0 < b0` (or `>`)
    of an integer first operand (signless or unsigned); None for any other comparator."""
    key = ir.RankedTensorType(op.operands[0].type).element_type
    if not (isinstance(key, ir.IntegerType) and not key.is_signed and key.width in (8, 16, 32, 64)):
        return None
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    if len(body) != 2 or body[0].name != "stablehlo.compare" or body[1].name != "stablehlo.return":
        return None
    compare, done = body[0], body[1]
    arguments = list(block.arguments)
    if list(compare.operands) != arguments[:2] or list(done.operands) != [compare.results[0]]:
        return None
    direction = str(compare.attributes["comparison_direction"])
    kind = str(compare.attributes["compare_type"]) if "compare_type" in compare.attributes else "SIGNED"
    if not any(d in direction for d in ("LT>", "GT>")) or not kind.endswith(("SIGNED>", "SIGNED")):
        return None
    signed = "UNSIGNED" not in kind and not key.is_unsigned
    from xlac.passes.lower.builders.sort_radix import RadixKey
    return RadixKey(key.width, signed=signed, descending="GT>" in direction)
