"""Which matmul outputs xla-micro-kernel-calls stores past the caches.

Why: a register tile's store of C first reads each line of C from memory
(a write-allocate), then writes it back later: GPT-2's LM head (256 x 8000
f32, 8 MB, written once from zeros in registers) moved C over the memory
bus twice. Non-temporal stores write whole lines without reading them
(the LM head on one AVX-512 core: 10-12% less time; docs/PERFORMANCE.md).
They leave C out of the caches, so only a C that nothing in the program
reads again and that the caches would not keep anyway is streamed: a
result of the program (a buffer the public entry is given to write), of
more than a few MiB, written once (the tile starts from zeros, so no
later k block reads it back).
"""

from __future__ import annotations

import math

from xlac.dtypes import element_bytes
from xlac.mlir import ir
from xlac.passes.base import nested_ops

_VIEWS = ("memref.subview", "memref.collapse_shape", "memref.expand_shape",
          "memref.reinterpret_cast", "memref.cast")


class ResultBuffers:
    """The module's public functions' buffer arguments, and the arguments of
    the functions they call that are always given one of those."""

    def __init__(self, module: ir.Operation):
        self._calls: dict[str, list[ir.Operation]] = {}
        self._functions: dict[str, ir.Operation] = {}
        for op in nested_ops(module):
            if op.name == "func.call":
                callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                self._calls.setdefault(callee, []).append(op)
            elif op.name == "func.func":
                self._functions[ir.StringAttr(op.attributes["sym_name"]).value] = op

    def is_large_result(self, memref: ir.Value, min_bytes: int) -> bool:
        """Whether ``memref`` is a view of a program result larger than ``min_bytes``."""
        root = _root(memref)
        return _bytes(root) > min_bytes and self._is_result(root, depth=0)

    def _is_result(self, value: ir.Value, depth: int) -> bool:
        if not isinstance(value, ir.BlockArgument) or depth > 4:
            return False
        func = value.owner.owner.operation     # (a FuncOp view's .name is its symbol)
        if func.name != "func.func":
            return False
        name = ir.StringAttr(func.attributes["sym_name"]).value
        visibility = func.attributes["sym_visibility"] if "sym_visibility" in func.attributes else None
        if visibility is None or ir.StringAttr(visibility).value == "public":
            return True
        calls = self._calls.get(name, [])
        return bool(calls) and all(self._is_result(_root(call.operands[value.arg_number]), depth + 1)
                                   for call in calls)


def _root(value: ir.Value) -> ir.Value:
    """The buffer ``value`` is a view of."""
    while isinstance(value.owner, ir.OpView) and value.owner.name in _VIEWS:
        value = value.owner.operands[0]
    return value


def _bytes(value: ir.Value) -> int:
    if not isinstance(value.type, ir.MemRefType):
        return 0
    shaped = ir.MemRefType(value.type)
    if not shaped.has_static_shape:
        return 0
    return math.prod(shaped.shape) * (element_bytes(shaped.element_type) or 1)
