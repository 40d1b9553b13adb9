"""xla-readonly-inputs: the entry's arguments are never written in place."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions


class ReadonlyInputs(ModulePass):
    """Mark every argument of public functions `bufferization.writable = false`.

    Why: one-shot-bufferize otherwise reuses an argument's buffer for an
    in-place update (dynamic_update_slice, scatter, loops), and that buffer is
    the caller's numpy array. Marked read-only, the update goes to a copy.
    """

    name = "xla-readonly-inputs"

    def run(self, module: ir.Operation) -> None:
        readonly = ir.DictAttr.get({"bufferization.writable": ir.BoolAttr.get(False)})
        for func in functions(module):
            if _is_private(func) or not func.regions[0].blocks:
                continue
            count = len(func.regions[0].blocks[0].arguments)
            old = func.attributes["arg_attrs"] if "arg_attrs" in func.attributes else None
            merged = [_merge(old[i] if old is not None else None, readonly) for i in range(count)]
            func.attributes["arg_attrs"] = ir.ArrayAttr.get(merged)


def _is_private(func: ir.Operation) -> bool:
    return "sym_visibility" in func.attributes and \
        ir.StringAttr(func.attributes["sym_visibility"]).value == "private"


def _merge(existing, extra: ir.DictAttr) -> ir.DictAttr:
    if existing is None:
        return extra
    existing = ir.DictAttr(existing)
    entries = {existing[i].name: existing[i].attr for i in range(len(existing))}
    entries.update({extra[i].name: extra[i].attr for i in range(len(extra))})
    return ir.DictAttr.get(entries)
