"""bench/llvm_work.py's parts on tiny inputs (in this process: quick)."""

from __future__ import annotations

import importlib.util

from conftest import REPO


def _tool():
    spec = importlib.util.spec_from_file_location("llvm_work", REPO / "bench" / "llvm_work.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_functions_alike_but_for_their_names_or_numbers_are_grouped():
    tool = _tool()
    texts = {"a": "llvm.func @a(%x: i64) { llvm.mlir.constant(4 : index) }",
             "b": "llvm.func @b(%x: i64) { llvm.mlir.constant(4 : index) }",
             "c": "llvm.func @c(%x: i64) { llvm.mlir.constant(8 : index) }"}
    assert sorted(map(sorted, tool.groups(texts, numbers=True))) == [["a", "b"], ["c"]]
    assert tool.groups(texts, numbers=False) == [["a", "b", "c"]]


def test_engine_phases_time_a_module_and_give_its_object():
    from xlac.mlir import ir
    from xlac.targets.cpu import piece_worker
    tool = _tool()
    with piece_worker._context() as context:
        module = ir.Module.parse(piece_worker._WARM_UP, context)
        spent, code = tool.engine_phases(module, (), 3)
    assert set(spent) == {"create", "lookup", "destroy"} and all(s >= 0 for s in spent.values())
    assert code[:4] == b"\x7fELF" and tool.code_sizes(code).get("xlac_warm_up", 0) > 0
