"""xla-select-entry: keep one public entry function."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, functions, symbol_name
from xlac.record import record


@record
class SelectEntry(ModulePass):
    """Make @entry the only public function; every other function becomes private.

    Why: the executable has one entry point, and private functions can then be
    inlined and dropped by symbol-dce. A missing entry is an error that lists
    the functions the module has. Example: `xla-select-entry{entry=main}`.
    """

    name = "xla-select-entry"
    entry: str = "main"

    def run(self, module: ir.Operation) -> None:
        funcs = functions(module)
        chosen = [f for f in funcs if symbol_name(f) == self.entry]
        if not chosen:
            names = ", ".join("@" + symbol_name(f) for f in funcs) or "none"
            raise PassFailure(module.location,
                              f"no function @{self.entry} in the module (functions: {names}); "
                              "pick one with --function / entry=")
        if _is_declaration(chosen[0]):
            raise PassFailure(chosen[0].location,
                              f"@{self.entry} is a declaration without a body")
        for func in funcs:
            visibility = "public" if func == chosen[0] else "private"
            func.attributes["sym_visibility"] = ir.StringAttr.get(visibility)


def _is_declaration(func: ir.Operation) -> bool:
    return len(func.regions[0].blocks) == 0
