"""xla-outline-top-k: top_k, however the exporter spelt it, kept from the full sort."""

from __future__ import annotations

from collections.abc import Sequence

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.helper_calls import fresh_symbol
from xlac.passes.ingest.approx_top_k import is_approx_top_k, lower_approx_top_k
from xlac.passes.lower.builders.top_k_kernel import TopKOrder, declaration_attributes, supported
from xlac.record import record

# Beyond this a full sort is no worse. The one pass shifts up to k slots per
# insertion: on ascending rows (every element inserted) ~2.4x the sort at
# k = 300 of 8000, on random rows 5x (k = 300) to 120x (k = 70) faster.
MAX_K = 320

# The encodings of top_k that only carry its name: a composite (jax.export:
# StableHLO has no top_k, so the portable artifact wraps chlo.top_k, its
# decomposition the full sort) and the custom call of XLA's HLO-to-StableHLO
# translation (torch_xla). Their attributes: k and, optionally, largest.
_COMPOSITE_VERSION = 1
_CUSTOM_CALL_TARGET = "mhlo.topk"
_KNOWN_ATTRIBUTES = {"k", "largest"}


@record
class OutlineTopK(ModulePass):
    """Replace each top_k (k <= MAX_K = 320, a float or signed integer row) by a call
    of a private declaration marked `xla.top_k = k`, which xla-lower-top-k
    later defines as a one-pass selection. A top_k is `chlo.top_k`, a
    `stablehlo.composite "chlo.top_k"` of version 1 (what `jax.export`
    writes) or a `stablehlo.custom_call @mhlo.topk` (XLA's HLO translated);
    `largest = false` asks for the k smallest. A `custom_call @ApproxTopK`
    (lax.approx_max_k) becomes the exact sort and slice XLA's CPU backend
    runs (approx_top_k.py), which xla-sort-slice-to-top-k may take. A composite that does not
    fit runs its decomposition (stablehlo-legalize-composite-to-call); a
    custom call that does not fit becomes chlo.top_k, which chlo's
    legalization turns into a sort.

    Why: the decomposition, like chlo-legalize-to-stablehlo, is a stable sort
    of every row and a slice: O(n log n) comparator calls for k of n results
    (a k=8 top-k over 128 rows of 4096 from jax.export ran 67x slower than
    XLA). Run before both.
    Example: `chlo.top_k(%x, k = 8)` becomes `call @xla_top_k_0(%x)`.
    """

    name = "xla-outline-top-k"
    acts_on = frozenset({"chlo.top_k", "stablehlo.composite", "stablehlo.custom_call"})
    max_k: int = MAX_K

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if is_approx_top_k(op):
                _replace(op, lower_approx_top_k(module, op))
                continue
            found = top_k_of(op)
            if found is None:
                continue
            k, order = found
            if fits(op.operands[0].type, op.results, k, self.max_k):
                results = call_top_k(module, op, op.operands[0], [r.type for r in op.results],
                                     k, order)
            elif op.name == "stablehlo.custom_call" and _chlo_can_say(op, order):
                results = _as_chlo_top_k(op, k)
            else:
                continue
            _replace(op, results)


def _replace(op: ir.Operation, results: Sequence[ir.Value] | None) -> None:
    if results is None:                          # left as it is, for xla-check-support to name
        return
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()


def top_k_of(op: ir.Operation) -> tuple[int, TopKOrder] | None:
    """k and the order of ``op`` if it is a top_k in one of the known spellings."""
    if op.name == "chlo.top_k":
        return ir.IntegerAttr(op.attributes["k"]).value, TopKOrder()
    if op.name == "stablehlo.composite" and _composite_is_top_k(op):
        return _k_and_order(ir.DictAttr(op.attributes["composite_attributes"]))
    if op.name == "stablehlo.custom_call" and _custom_call_is_top_k(op):
        return _k_and_order(ir.DictAttr(op.attributes["mhlo.attributes"]))
    return None


def _composite_is_top_k(op: ir.Operation) -> bool:
    version = ir.IntegerAttr(op.attributes["version"]).value if "version" in op.attributes else 0
    return (ir.StringAttr(op.attributes["name"]).value == "chlo.top_k"
            and version == _COMPOSITE_VERSION and _known_attributes(op, "composite_attributes"))


def _custom_call_is_top_k(op: ir.Operation) -> bool:
    config = op.attributes["backend_config"] if "backend_config" in op.attributes else None
    return (ir.StringAttr(op.attributes["call_target_name"]).value == _CUSTOM_CALL_TARGET
            and (config is None or str(config) == '""')
            and _known_attributes(op, "mhlo.attributes"))


def _known_attributes(op: ir.Operation, dictionary: str) -> bool:
    """``op`` has a dictionary ``dictionary`` with an integer k and nothing unknown."""
    if dictionary not in op.attributes:
        return False
    attributes = ir.DictAttr(op.attributes[dictionary])
    names = {named.name for named in attributes}
    return "k" in names and names <= _KNOWN_ATTRIBUTES and isinstance(attributes["k"], ir.IntegerAttr)


def _k_and_order(attributes: ir.DictAttr) -> tuple[int, TopKOrder] | None:
    names = {named.name for named in attributes}
    largest = ir.BoolAttr(attributes["largest"]).value if "largest" in names else True
    return ir.IntegerAttr(attributes["k"]).value, TopKOrder(smallest=not largest)


def fits(source: ir.Type, results: Sequence[ir.Value], k: int, max_k: int = MAX_K) -> bool:
    """Can the one-pass kernel compute this top-k (else the sort does)?"""
    source = ir.RankedTensorType(source)
    shaped = [ir.RankedTensorType(r.type) for r in results]
    return (source.has_static_shape and source.rank >= 1 and supported(str(source.element_type))
            and all(t.has_static_shape for t in shaped) and 0 < k <= min(max_k, source.shape[-1]))


def call_top_k(module: ir.Operation, anchor: ir.Operation, source: ir.Value,
               result_types: Sequence[ir.Type], k: int, order: TopKOrder) -> list[ir.Value]:
    """A call, before ``anchor``, of a fresh top-k declaration on ``source``'s
    last dim; its (values, indices)."""
    name = fresh_symbol(module, "xla_top_k")
    results = ", ".join(str(t) for t in result_types)
    text = (f"func.func private @{name}({source.type}) -> ({results}) "
            f"attributes {declaration_attributes(k, order)}")
    with module.context, anchor.location:
        declaration = ir.Operation.parse(text)
        ir.InsertionPoint(module.regions[0].blocks[0]).insert(declaration)
        call = ir.Operation.create("func.call", results=list(result_types), operands=[source],
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
                                   ip=ir.InsertionPoint(anchor))
    return list(call.results)


def _chlo_can_say(op: ir.Operation, order: TopKOrder) -> bool:
    """chlo.top_k has no `largest` and i32 indices only."""
    indices = ir.RankedTensorType(op.results[1].type) if len(op.results) == 2 else None
    return not order.smallest and indices is not None and str(indices.element_type) == "i32"


def _as_chlo_top_k(op: ir.Operation, k: int) -> list[ir.Value]:
    with op.context, op.location:
        top_k = ir.Operation.create(
            "chlo.top_k", results=[r.type for r in op.results], operands=[op.operands[0]],
            attributes={"k": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)},
            ip=ir.InsertionPoint(op))
    return list(top_k.results)
