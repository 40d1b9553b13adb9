"""When the IR is verified: after each stage by default (as XLA verifies after
each pass pipeline), after every pass with ``verify_each`` (mlir-opt's
``--verify-each``). A pass that leaves invalid IR is reported either way, as
an xlac bug, never as a crash further down."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import xlac
import xlac.passes.registry as registry
from xlac.errors import CompileError
from xlac.mlir import ir
from xlac.passes.base import ModulePass
from xlac.pipeline.pass_manager import run_passes

_ADD = ("func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")


@dataclasses.dataclass(frozen=True)
class _BreakReturn(ModulePass):
    """Test only: drops the operand of every func.return (invalid IR)."""

    name = "test-break-return"

    def run(self, module: ir.Operation) -> None:
        def visit(op):
            if op.name == "func.return":
                with ir.InsertionPoint(op), op.location:
                    ir.Operation.create("func.return")
                op.erase()
            return ir.WalkResult.ADVANCE
        module.walk(visit)


@pytest.fixture
def breaking_pass(monkeypatch):
    names, get, known = registry.pass_names, registry.get_pass_class, registry.is_pass
    monkeypatch.setattr(registry, "pass_names", lambda: [*names(), _BreakReturn.name])
    monkeypatch.setattr(registry, "is_pass", lambda n: n == _BreakReturn.name or known(n))
    monkeypatch.setattr(registry, "get_pass_class",
                        lambda n: _BreakReturn if n == _BreakReturn.name else get(n))


def _module(ctx_text: str) -> ir.Module:
    from xlac.context import new_context
    return ir.Module.parse(ctx_text, new_context())


@pytest.mark.parametrize("verify_each", [True, False])
def test_invalid_ir_is_an_error_either_way(breaking_pass, verify_each):
    module = _module(_ADD)
    with pytest.raises(CompileError) as caught:
        run_passes(module, ["test-break-return", "canonicalize"], verify_each=verify_each)
    text = str(caught.value)
    assert "return" in text or "invalid" in text
    if not verify_each:
        assert "XLAC_VERIFY_EACH=1" in text         # says how to find the pass


def test_stage_end_verify_can_be_left_to_the_caller(breaking_pass):
    """Pass by pass (dump, trace, a progress bar), only a stage's last pass verifies."""
    module = _module(_ADD)
    run_passes(module, ["test-break-return"], verify_each=False, verify_after=False)
    assert '"func.return"() : () -> ()' in str(module)   # left for the stage's end to find


@pytest.mark.parametrize("verify_each", [True, False])
@pytest.mark.parametrize("stepwise", [False, True])
def test_compile_runs_the_same_either_way(tmp_path, verify_each, stepwise):
    options = xlac.Options(cache_dir=None, verify_each=verify_each,
                           trace_to=str(tmp_path / "t.json") if stepwise else "")
    exe = xlac.compile(_ADD, options=options)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(exe.run(x)[0], 2 * x)


def test_the_environment_and_the_tools_set_it():
    assert xlac.Options.from_env({"XLAC_VERIFY_EACH": "1"}).verify_each
    assert not xlac.Options.from_env({}).verify_each
    from xlac.tools.common import tool_options

    class Args:
        verify_each = True
    assert tool_options(Args()).verify_each
