"""Python passes that name the ops they rewrite (``ModulePass.acts_on``) are skipped
when none of those ops is in the module, on a census of op names that a run of
Python passes shares (one walk, not one per pass); a pass that ran, or an
upstream pass between two Python passes, makes the next one count again. The list
of the module's ops (``module_ops``) is shared the same way by passes that create
and erase no op (``ModulePass.keeps_ops``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import xlac.passes.registry as registry
from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.pipeline.pass_manager import run_passes

PROGRAM = ("func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
           "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
HELPER = ("module {\n  func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
          "    %0 = stablehlo.abs %x : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n")
BARRIER = ("func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
           "  %0 = stablehlo.optimization_barrier %a : tensor<4xf32>\n"
           "  %1 = stablehlo.add %0, %0 : tensor<4xf32>\n  return %1 : tensor<4xf32>\n}\n")
RAN: list[str] = []


@dataclass(frozen=True)
class WantsAbs(ModulePass):
    """Records that it ran (test pass): only where a stablehlo.abs is."""

    name = "xla-test-wants-abs"
    acts_on = frozenset({"stablehlo.abs"})

    def run(self, module: ir.Operation) -> None:
        RAN.append("abs")


@dataclass(frozen=True)
class AddsAbs(ModulePass):
    """Adds a function holding a stablehlo.abs (test pass)."""

    name = "xla-test-adds-abs"

    def run(self, module: ir.Operation) -> None:
        RAN.append("adds")
        parsed = ir.Module.parse(HELPER, context=module.context)
        for op in list(parsed.body.operations):
            module.regions[0].blocks[0].append(op.operation.detach_from_parent())


@dataclass(frozen=True)
class WantsLinalg(ModulePass):
    """Records that it ran (test pass): only where linalg ops are."""

    name = "xla-test-wants-linalg"
    acts_on = frozenset({"linalg.generic", "linalg.map"})

    def run(self, module: ir.Operation) -> None:
        RAN.append("linalg")


WALKS: list[list] = []          # the lists themselves: ids of freed ones are reused


@dataclass(frozen=True)
class ReadsOps(ModulePass):
    """Records the op list it is given (test pass); keeps the ops."""

    name = "xla-test-reads-ops"
    keeps_ops = True

    def run(self, module: ir.Operation) -> None:
        ops = module_ops(module)
        WALKS.append(ops)
        RAN.append(f"ops:{len(ops)}")


@dataclass(frozen=True)
class WantsAddReadsOps(ModulePass):
    """Records the op list it is given (test pass): only where a stablehlo.add is."""

    name = "xla-test-wants-add-reads-ops"
    acts_on = frozenset({"stablehlo.add"})

    def run(self, module: ir.Operation) -> None:
        WALKS.append(module_ops(module))
        RAN.append("add")


@pytest.fixture(autouse=True)
def test_passes(monkeypatch):
    classes = {c.name: c for c in (WantsAbs, AddsAbs, WantsLinalg, ReadsOps, WantsAddReadsOps)}
    real_names, real_class = registry.pass_names, registry.get_pass_class
    monkeypatch.setattr(registry, "pass_names", lambda: [*real_names(), *classes])
    monkeypatch.setattr(registry, "is_pass", lambda name: name in classes or name in real_names())
    monkeypatch.setattr(registry, "get_pass_class", lambda name: classes.get(name) or real_class(name))
    RAN.clear()
    WALKS.clear()


def _run(steps: list[str]) -> list[str]:
    module = parse_module(new_context(), PROGRAM.encode(), "census.mlir")
    run_passes(module, steps)
    return list(RAN)


def test_a_pass_without_its_ops_is_skipped_and_one_that_ran_makes_the_next_count_again():
    assert _run(["xla-test-wants-abs", "xla-test-adds-abs", "xla-test-wants-abs"]) == ["adds", "abs"]


def test_an_upstream_pass_between_makes_the_next_python_pass_count_again():
    steps = ["xla-test-wants-linalg", "func.func(stablehlo-legalize-to-linalg)", "xla-test-wants-linalg"]
    assert _run(steps) == ["linalg"]


def test_each_pass_manager_counts_anew():
    module = parse_module(new_context(), PROGRAM.encode(), "census.mlir")
    run_passes(module, ["xla-test-wants-abs"])          # counted: no abs
    run_passes(module, ["xla-test-adds-abs"])
    run_passes(module, ["xla-test-wants-abs"])          # a new pass manager: counted again
    assert RAN == ["adds", "abs"]


def test_the_passes_that_name_their_ops_name_real_ops():
    """A misspelt name in ``acts_on`` would skip its pass on every program."""
    ctx = new_context()
    for name in registry.pass_names():
        for op_name in registry.get_pass_class(name).acts_on:
            assert ctx.is_registered_operation(op_name), (name, op_name)


def test_passes_that_keep_the_ops_share_one_walk_and_one_that_does_not_makes_a_new_one():
    steps = ["xla-test-reads-ops", "xla-test-reads-ops", "xla-test-adds-abs", "xla-test-reads-ops",
             "func.func(canonicalize)", "xla-test-reads-ops"]
    assert _run(steps) == ["ops:3", "ops:3", "adds", "ops:6", "ops:6"]
    first, kept, after_change, after_upstream = WALKS
    assert kept is first and after_change is not first and after_upstream is not after_change


def test_outside_a_pass_manager_nothing_is_kept():
    module = parse_module(new_context(), PROGRAM.encode(), "census.mlir")
    first, second = module_ops(module.operation), module_ops(module.operation)
    assert first is not second and len(first) == len(second) == 3



def test_the_census_and_the_op_list_are_one_walk(monkeypatch):
    """A pass that acts after a census reads the census's walk; a pass that keeps
    the ops keeps the census too (no second count for the next pass's skip)."""
    counted = _count_walks(monkeypatch)
    steps = ["xla-test-reads-ops", "xla-test-wants-abs", "xla-test-wants-add-reads-ops"]
    assert _run(steps) == ["ops:3", "add"]
    first, after_census = WALKS
    assert after_census is first and counted == [1]


def test_the_checks_share_the_walk_of_the_module(monkeypatch):
    """The checks, the passes that found nothing to rewrite and a census for
    xla-unroll-short-loops: one walk of the module (main made seven and its censuses)."""
    counted = _count_walks(monkeypatch)
    steps = ["xla-check-ranked", "xla-logical-booleans", "xla-check-support{target=cpu}",
             "xla-lower-structural", "xla-outer-dots-as-multiplies", "xla-unroll-short-loops"]
    assert _run(steps) == []
    assert counted == [1]


def test_a_pass_that_rewrote_an_op_makes_the_next_walk_anew(monkeypatch):
    """xla-lower-structural keeps the walk unless it erased an op (here a barrier)."""
    counted = _count_walks(monkeypatch)
    module = parse_module(new_context(), BARRIER.encode(), "census.mlir")
    run_passes(module, ["xla-check-ranked", "xla-lower-structural", "xla-test-reads-ops"])
    assert counted == [2] and RAN == ["ops:3"]


def _count_walks(monkeypatch) -> list[int]:
    """Counts the walks of a whole module by ``nested_ops``, wherever it was imported."""
    import sys

    import xlac.passes.base as base
    counted, real = [0], base.nested_ops

    def counting(op):
        if op.name == "builtin.module":
            counted[0] += 1
        return real(op)
    for module in list(sys.modules.values()):
        if getattr(module, "nested_ops", None) is real:
            monkeypatch.setattr(module, "nested_ops", counting)
    return counted
