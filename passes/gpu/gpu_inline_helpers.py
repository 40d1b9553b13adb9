"""xla-gpu-inline-helpers: every call of a private one-block function replaced by its body.

xla-gpu-kernels and xla-gpu-matmul-kernels replace each op by a call of a
helper of its own (``@xla_gpu_kernel_N``, ``@xla_gpu_matmul_N``, their
``_body`` regions), called once. Upstream ``inline`` splits the caller's block
at every call and splices the rest of the block back (each inlining costs the
ops after the call), and builds a call graph and symbol use lists even with
nothing to inline: with a host function of 2,000 kernels it was superlinear
(500 -> 2,000 ops: 7.8x; 4.7x with no call left). Here one walk per round
lists the calls; a function called once has its ops moved before the call
(O(its own ops)), one called more often is cloned per call and the clone's ops
moved. Calls inside a moved or cloned body are found by the next round (the
helpers nest two deep: a kernel calls its ``_body``); a recursive function (none
comes from StableHLO, which has no recursion) is left a function, its calls calls.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, is_within, symbol_name
from xlac.passes.outline import inline_call as inline_body

MAX_ROUNDS = 16                            # helpers nest 2 deep; more is recursion


class GpuInlineHelpers(ModulePass):
    """Replace each call of a private one-block func.func by its body (linear; see module docs)."""

    name = "xla-gpu-inline-helpers"

    def run(self, module: ir.Operation) -> None:
        functions = {symbol_name(op.operation): op.operation
                     for op in module.regions[0].blocks[0].operations
                     if op.operation.name == "func.func" and _inlinable(op.operation)}
        for name in [name for name in functions if _recursive(name, functions)]:
            del functions[name]                 # stays a function, and its calls calls
        inlined, moved = set(), set()
        for _ in range(MAX_ROUNDS):
            calls = _calls_of(module, functions, moved)
            if not calls:
                break
            # a function cloned per call brings new calls of what it calls: those are
            # cloned too, never moved (their bodies must stay for the next round)
            cloned = _closure({name for name, found in calls.items() if len(found) > 1}, functions)
            for name, found in calls.items():
                if name in cloned:
                    for call in found:
                        inline_body(call, functions[name], copy=True, relocate=False)
                else:
                    inline_body(found[0], functions[name], copy=False, relocate=False, erase=False)
                    moved.add(name)
                inlined.add(name)
        for name in inlined:
            functions[name].erase()             # no call of it is left


def _closure(names: set[str], functions: dict[str, ir.Operation]) -> set[str]:
    """``names`` and every function of ``functions`` called inside them, transitively."""
    found, todo = set(names), list(names)
    while todo:
        for callee in _callees(functions[todo.pop()]):
            if callee in functions and callee not in found:
                found.add(callee)
                todo.append(callee)
    return found


def _recursive(name: str, functions: dict[str, ir.Operation]) -> bool:
    """Does ``name`` call itself, directly or through other ``functions``?"""
    return name in _closure(_callees(functions[name]) & set(functions), functions)


def _callees(func: ir.Operation) -> set[str]:
    names = set()

    def visit(op):
        if op.name == "func.call":
            names.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return names


def _inlinable(func: ir.Operation) -> bool:
    return len(func.regions[0].blocks) == 1 and "sym_visibility" in func.attributes \
        and ir.StringAttr(func.attributes["sym_visibility"]).value == "private"


def _calls_of(module: ir.Operation, functions: dict[str, ir.Operation], moved: set[str]) -> dict[str, list]:
    """The calls of ``functions`` (but those whose body was ``moved`` out), by
    callee; one walk. A call inside its own callee (recursion) is left."""
    calls: dict[str, list[ir.Operation]] = {}

    def visit(op):
        if op.name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee in functions and callee not in moved and not is_within(op, functions[callee]):
                calls.setdefault(callee, []).append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return calls


def inline_call(func: ir.Operation, call: ir.Operation) -> None:
    """Replace ``call``, the one call of the one-block ``func``, by ``func``'s
    body, and erase ``func`` (for a pass that writes a helper and wants its ops
    in place at once)."""
    inline_body(call, func, copy=False, relocate=False)
