"""xla-lower-top-k: the top-k declarations of xla-outline-top-k, defined."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions, symbol_name
from xlac.passes.helper_calls import parse_at
from xlac.passes.lower.builders.top_k_kernel import TOP_K_ATTR, helper_text, order_of
from xlac.record import record


@record
class LowerTopK(ModulePass):
    """Give each private declaration marked `xla.top_k = k` its body: every row
    (in parallel) read once against a sorted buffer of the k best so far,
    blocks of 16 skimmed as one vector compare (see top_k_kernel.py), in scf
    loops on tensors; `inline` then puts it in place. Ties keep the earlier
    element first and floats compare in total order, as the sort chlo.top_k
    legalizes to; `xla.top_k_smallest` and `xla.top_k_canonical` ask for the
    k smallest and for jnp.sort's order (see top_k_keys.py). From k =
    ``counted-insert-k`` on (0: never) an element finds its slot by counting
    the better keys with vector compares and the worse ones move down a vector
    at a time (top_k_kernel.py's counted insert): the CPU's with AVX-512.
    On rows of at least four chunks of k (in vectors) elements, whatever the
    CPU, a floor under the k-th best found first bounds the inserts of
    sorted rows (top_k_threshold.py).
    """

    name = "xla-lower-top-k"

    counted_insert_k: int = 0

    def run(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        for func in functions(module):
            if TOP_K_ATTR not in func.attributes or func.regions[0].blocks:
                continue
            ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
            source = ir.RankedTensorType(ftype.inputs[0])
            index = str(ir.RankedTensorType(ftype.results[1]).element_type)
            k = ir.IntegerAttr(func.attributes[TOP_K_ATTR]).value
            text = helper_text(symbol_name(func), list(source.shape), str(source.element_type), k,
                               index, order_of(func.attributes), self.counted_insert_k)
            parsed = parse_at(text, func)
            for helper in list(parsed.body.operations):
                ir.InsertionPoint(body).insert(helper.operation.detach_from_parent())
            func.erase()
