"""xla-reshaped-results: a result that is a reshape of a local buffer is
allocated in the result's shape, so it needs no copy into the caller's array."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, public_definitions
from xlac.passes.buffers.row_copies import is_identity

_INVERSE = {"memref.collapse_shape": "memref.expand_shape",
            "memref.expand_shape": "memref.collapse_shape"}


class ReshapedResults(ModulePass):
    """Allocate a buffer that a public function returns through a
    `memref.collapse_shape` or `memref.expand_shape` in the returned shape,
    and give its writers the inverse reshape of it (a view).

    Why: buffer-results-to-out-params{hoist-static-allocs} writes a returned
    `memref.alloc` in place into the caller's array, but a returned reshape
    of one is copied there after the kernels ran: a program whose last op
    is a transpose and a reshape (jnp.fft.fft's digit-reversing transpose,
    (180, 5, 12, 12, 2) viewed as (180, 720, 2)) paid a whole copy kernel
    (0.06 ms of 1.1). Only a static, identity-layout alloc that is not
    returned itself is taken; its users and the reshape's other users (the
    kernels writing through it) see the same bytes.

        %a = memref.alloc() : memref<4x2x3xf32>    // written by kernels
        %r = memref.collapse_shape %a [[0], [1, 2]] : ... into memref<4x6xf32>
        return %r
      becomes
        %b = memref.alloc() : memref<4x6xf32>
        %a = memref.expand_shape %b [[0], [1, 2]] output_shape [4, 2, 3] : ...
        return %b
    """

    name = "xla-reshaped-results"

    def run(self, module: ir.Operation) -> None:
        for func in public_definitions(module):
            for block in func.regions[0].blocks:
                terminator = list(block.operations)[-1]
                if terminator.name == "func.return":
                    for index in range(len(terminator.operands)):
                        _unreshape(terminator, index)


def _unreshape(terminator: ir.Operation, index: int) -> None:
    value = terminator.operands[index]
    reshape = value.owner
    if not hasattr(reshape, "name") or reshape.name not in _INVERSE:
        return
    source = reshape.operands[0]
    alloc = source.owner
    if not hasattr(alloc, "name") or alloc.name != "memref.alloc" \
            or any(o == source for o in terminator.operands):
        return
    source_type, result_type = ir.MemRefType(source.type), ir.MemRefType(value.type)
    if not (_plain(source_type) and _plain(result_type)):
        return
    with ir.InsertionPoint(alloc), alloc.location:
        fresh = ir.Operation.create("memref.alloc", results=[result_type], operands=[],
                                    attributes={name: alloc.attributes[name] for name in alloc.attributes})
        attributes = {"reassociation": reshape.attributes["reassociation"]}
        if _INVERSE[reshape.name] == "memref.expand_shape":
            attributes["static_output_shape"] = ir.DenseI64ArrayAttr.get(list(source_type.shape))
        view = ir.Operation.create(_INVERSE[reshape.name], results=[source_type],
                                   operands=[fresh.result], attributes=attributes)
    value.replace_all_uses_with(fresh.result)    # reshape(inverse(fresh)) is fresh
    reshape.erase()
    source.replace_all_uses_with(view.result)
    alloc.erase()


def _plain(t: ir.MemRefType) -> bool:
    """Static shape, identity layout (reshapes of it are views both ways)."""
    return t.has_static_shape and is_identity(t)
