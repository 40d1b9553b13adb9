"""Helper names: fresh_symbol never reuses a name a symbol starts with, and
inside a pass run reads the module's names once (run_memo)."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.context import new_context
from xlac.mlir import ir, passmanager
from xlac.passes.base import ModulePass, run_memo
from xlac.passes.helper_calls import fresh_symbol

TAKEN = """
func.func private @x_0()
func.func private @x_12a()
func.func private @x_2_body()
func.func private @x_03()
func.func private @y_1()
"""


@dataclass(frozen=True)
class _NameThree(ModulePass):
    """Names three helpers, adding each to the module, as lowering passes do."""

    name = "test-name-three"

    def run(self, module: ir.Operation) -> None:
        assert run_memo() is not None
        for _ in range(3):
            name = fresh_symbol(module, "x")
            helper = ir.Operation.parse(f"func.func private @{name}()")
            ir.InsertionPoint(module.regions[0].blocks[0]).insert(helper)


def _names(module: ir.Module) -> list[str]:
    return [ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations]


def test_outside_a_pass_the_smallest_free_index():
    """x_0, x_12a (so x_1 and x_12), x_2_body (x_2) are taken; x_03 takes x_0
    only (03 is no number's spelling); another stem does not count."""
    assert run_memo() is None
    with new_context():
        module = ir.Module.parse(TAKEN)
        assert fresh_symbol(module.operation, "x") == "x_3"
        assert fresh_symbol(module.operation, "y") == "y_0"


def test_inside_a_pass_names_stay_distinct():
    with new_context() as ctx:
        module = ir.Module.parse(TAKEN)
        pm = passmanager.PassManager("builtin.module", context=ctx)
        _NameThree().add_to(pm)
        pm.run(module.operation)
        names = _names(module)
        assert names[-3:] == ["x_3", "x_4", "x_5"]
        assert len(set(names)) == len(names)
        assert run_memo() is None               # the memo ends with the run
