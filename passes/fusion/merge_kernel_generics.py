"""xla-merge-kernel-generics: each of xla-fuse's outlined kernels as one
multi-result linalg.generic, as XLA emits a (multi-output) loop fusion."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions
from xlac.passes.fusion.outline_fusions import CALL_ATTR
from xlac.passes.outline import clone_ops

_FREE = ("arith.constant", "tensor.empty", "func.return")


class MergeKernelGenerics(ModulePass):
    """In each function of xla-outline-fusions (one xla-fuse kernel), merge its
    all-parallel linalg.generics over one iteration space into one generic
    yielding every value read outside it.

    Why: upstream `linalg-fuse-elementwise-ops` fuses a producer into its
    consumer only when it has one use. A kernel whose values feed several
    others (a continued fraction's body: `an`, `bn` and the scaled
    numerators each read by four or more updates) stays one generic per
    shared value and per result, each a pass over the arrays: igamma's loop
    body, 3 xla-fuse kernels, was 27 loop nests a trip. XLA emits such a
    fusion as one loop computing every output per element, the shared
    values in registers; so does this pass. The same operations on the same
    values: bit for bit the same results. A generic read by another through
    a map that is not the identity (a transpose, a broadcast), or by an op
    that is not a candidate (a reduction), leaves the kernel as it is.

        %a = linalg.generic ins(%x) outs(%e)        // a = x * 2
        %b = linalg.generic ins(%a, %y) outs(%e)    // b = a + y
        %c = linalg.generic ins(%a) outs(%e)        // c = a - 1
        return %b, %c
      ->
        %m:2 = linalg.generic ins(%x, %y) outs(%e, %e)   // a once; yields b, c
        return %m#0, %m#1
    """

    name = "xla-merge-kernel-generics"

    def run(self, module: ir.Operation) -> None:
        kernels = {_callee(op) for op in _calls(module)}
        for func in functions(module):
            if ir.StringAttr(func.attributes["sym_name"]).value in kernels:
                merge_block(func.regions[0].blocks[0])


def _calls(module: ir.Operation):
    found = []

    def visit(op):
        if op.name == "func.call" and CALL_ATTR in op.attributes:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def _callee(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _segments(op: ir.Operation) -> tuple[int, int]:
    inputs, outputs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return inputs, outputs


def _space(op: ir.Operation):
    """The static iteration space of an all-parallel generic whose outputs are
    written whole and whose body reads no output and nests no region; or None."""
    if op.name != "linalg.generic":
        return None
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    if any("parallel" not in it for it in iterators):
        return None
    inputs, outputs = _segments(op)
    maps = _maps(op)
    block = op.regions[0].blocks[0]
    if any(len(inner.regions) for inner in block.operations):
        return None
    for k in range(outputs):
        value = op.operands[inputs + k]
        rank = len(iterators)
        if str(maps[inputs + k]) != str(ir.AffineMap.get_identity(rank)):
            return None
        if not isinstance(value.type, ir.RankedTensorType) or not value.type.has_static_shape:
            return None
        if len(list(block.arguments[inputs + k].uses)):
            return None
    return tuple(ir.RankedTensorType(op.operands[inputs].type).shape)


def merge_block(block: ir.Block) -> bool:
    """Merge ``block``'s candidate generics into one when all of them may be;
    whether it did."""
    ops = [op.operation for op in block.operations]
    members = [op for op in ops if _space(op) is not None]
    if len(members) < 2 or len({_space(op) for op in members}) != 1:
        return False
    rank = len(_space(members[0]))
    identity = str(ir.AffineMap.get_identity(rank))
    produced = {result: op for op in members for result in op.results}
    member_set = set(members)
    for op in ops:
        if op in member_set:
            inputs, _ = _segments(op)
            for value, amap in zip(list(op.operands)[:inputs], _maps(op)):
                if value in produced and str(amap) != identity:
                    return False
        elif op.name not in _FREE and any(v in produced for v in op.operands):
            return False
    _merge(members, produced, member_set)
    return True


def _merge(members: list[ir.Operation], produced: dict, member_set: set) -> None:
    last = members[-1]
    external: dict[tuple, int] = {}          # (value, map text) -> input position
    inputs_list, input_maps = [], []
    for op in members:
        inputs, _ = _segments(op)
        for value, amap in zip(list(op.operands)[:inputs], _maps(op)):
            key = (value, str(amap))
            if value not in produced and key not in external:
                external[key] = len(inputs_list)
                inputs_list.append(value)
                input_maps.append(amap)
    results = [r for op in members for r in op.results
               if any(use.owner.operation not in member_set for use in r.uses)]
    inits = []
    for result in results:
        op = result.owner.operation
        inputs, _ = _segments(op)
        inits.append(op.operands[inputs + result.result_number])
    rank = _maps(last)[0].n_dims
    out_map = ir.AffineMap.get_identity(rank)
    with last.context, last.location:
        attributes = {
            "indexing_maps": ir.ArrayAttr.get(
                [ir.AffineMapAttr.get(m) for m in input_maps + [out_map] * len(inits)]),
            "iterator_types": last.attributes["iterator_types"],
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs_list), len(inits)]),
        }
        merged = ir.Operation.create("linalg.generic", results=[r.type for r in results],
                                     operands=inputs_list + inits, attributes=attributes,
                                     regions=1, ip=ir.InsertionPoint(last))
        types = [ir.RankedTensorType(v.type).element_type for v in inputs_list + inits]
        body = merged.regions[0].blocks.append(*types)
        args = list(body.arguments)
        yielded: dict[ir.Value, ir.Value] = {}     # a member's result -> its value in the body
        with ir.InsertionPoint(body):
            for op in members:
                inputs, _ = _segments(op)
                block = op.regions[0].blocks[0]
                mapping = {}
                for arg, value, amap in zip(list(block.arguments)[:inputs], list(op.operands)[:inputs],
                                            _maps(op)):
                    mapping[arg] = yielded[value] if value in produced else \
                        args[external[(value, str(amap))]]
                body_ops = [o.operation for o in block.operations]
                clone_ops(body_ops[:-1], mapping)
                for result, value in zip(op.results, body_ops[-1].operands):
                    yielded[result] = mapping.get(value, value)
            ir.Operation.create("linalg.yield", operands=[yielded[r] for r in results])
    for result, new in zip(results, merged.results):
        result.replace_all_uses_with(new)
    for op in reversed(members):
        op.erase()


def distinct_inits(op: ir.Operation) -> None:
    """Give each output of a multi-result generic that shares its `tensor.empty`
    with an earlier output of it a clone of that empty (CSE merges the merged
    generic's empties into one; bufferized, one buffer for two outputs is a
    fresh copy of it per output, a whole-array copy each call)."""
    if op.name != "linalg.generic":
        return
    inputs, outputs = _segments(op)
    seen = set()
    for k in range(inputs, inputs + outputs):
        value = op.operands[k]
        owner = value.owner
        if value in seen and isinstance(owner, ir.OpView) and owner.name == "tensor.empty":
            op.operands[k] = owner.operation.clone(ip=ir.InsertionPoint(op)).results[0]
        seen.add(value)
