"""Compile work that grows with the program, not with its square.

Counted, not timed (the machine is shared): lookups, matches and planning
calls on k and 4k repeated blocks. bench/compile_scaling.py measures the seconds.
"""

from __future__ import annotations

import sys

import numpy as np

import xlac
from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.passes.base import functions, nested_ops, symbol_name
from xlac.passes.cpu import apply_schedules
from xlac.passes.cpu.plans import fused_rows_plan, schedule_script
from xlac.pipeline import pipelines
from xlac.pipeline.pass_manager import run_passes

_T = "tensor<32x64xf32>"


def _residual_softmaxes(blocks: int) -> str:
    """``blocks`` times x = softmax(x @ w) + x: row reductions whose zero fill CSE shares."""
    lines = [f"func.func public @main(%x0: {_T}, %w: tensor<64x64xf32>) -> {_T} {{",
             "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>",
             "  %zero = stablehlo.constant dense<0.0> : tensor<f32>"]
    for k in range(blocks):
        x, y = f"%x{k}", f"%x{k + 1}"
        lines += [
            f"  %h{k} = stablehlo.dot_general {x}, %w, contracting_dims = [1] x [0]"
            f" : ({_T}, tensor<64x64xf32>) -> {_T}",
            f"  %m{k} = stablehlo.reduce(%h{k} init: %ninf) applies stablehlo.maximum across dimensions = [1]"
            f" : ({_T}, tensor<f32>) -> tensor<32xf32>",
            f"  %mb{k} = stablehlo.broadcast_in_dim %m{k}, dims = [0] : (tensor<32xf32>) -> {_T}",
            f"  %d{k} = stablehlo.subtract %h{k}, %mb{k} : {_T}",
            f"  %e{k} = stablehlo.exponential %d{k} : {_T}",
            f"  %s{k} = stablehlo.reduce(%e{k} init: %zero) applies stablehlo.add across dimensions = [1]"
            f" : ({_T}, tensor<f32>) -> tensor<32xf32>",
            f"  %sb{k} = stablehlo.broadcast_in_dim %s{k}, dims = [0] : (tensor<32xf32>) -> {_T}",
            f"  %p{k} = stablehlo.divide %e{k}, %sb{k} : {_T}",
            f"  {y} = stablehlo.add %p{k}, {x} : {_T}"]
    lines += [f"  return %x{blocks} : {_T}", "}"]
    return "\n".join(lines) + "\n"


def _linalg(blocks: int):
    module = parse_module(new_context(), _residual_softmaxes(blocks).encode(), "blocks.mlir")
    run_passes(module, pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg())
    return module


def _schedule_counting(monkeypatch, blocks: int, share: bool = False) -> tuple[int, str]:
    """Row-nest look-ups planning makes, and the generated transform main
    (each block's kernels scheduled apart unless ``share``)."""
    module = _linalg(blocks)
    calls, texts = [0], []
    real_nest, real_append = fused_rows_plan._row_nest, apply_schedules.append_schedules

    def counted(op):
        calls[0] += 1
        return real_nest(op)

    def kept(module, plans, order):
        texts.append(schedule_script._main_text(plans, *order))
        return real_append(module, plans, order)

    monkeypatch.setattr(fused_rows_plan, "_row_nest", counted)
    monkeypatch.setattr(apply_schedules, "append_schedules", kept)
    run_passes(module, [f"xla-apply-schedules{{threads=2 vector-bytes=32 share-kernels={str(share).lower()}}}"])
    return calls[0], texts[0]


def test_fused_rows_planning_grows_linearly(monkeypatch):
    few, _ = _schedule_counting(monkeypatch, 4)
    many, _ = _schedule_counting(monkeypatch, 16)
    assert 0 < many <= 5 * few       # was quadratic: each root walked every earlier block


def test_scheduled_ops_are_matched_once(monkeypatch):
    _, few = _schedule_counting(monkeypatch, 4)
    _, many = _schedule_counting(monkeypatch, 16)
    assert few.count("transform.include @xla_") < many.count("transform.include @xla_")
    # one match of the tag (and one of the members' tag), split per op; not one match per op
    assert many.count("structured.match") == few.count("structured.match") <= 2
    assert "transform.split_handle" in many


def test_identical_kernels_are_scheduled_once(monkeypatch):
    """Repeated blocks' kernels: one schedule each, however many blocks."""
    _, few = _schedule_counting(monkeypatch, 4, share=True)
    _, many = _schedule_counting(monkeypatch, 16, share=True)
    assert few.count("transform.include @xla_") == many.count("transform.include @xla_") > 1


def test_shared_schedules_give_the_same_code():
    """Scheduled once, kept as one function through bufferization, and copied
    to each place on the way to LLVM: the ops each copy had alone."""
    shared, apart = _linalg(4), _linalg(4)
    run_passes(shared, ["xla-apply-schedules{threads=2 vector-bytes=32}"])
    calls = [op for op in nested_ops(shared.operation) if op.name == "func.call"]
    callees = {str(call.attributes["callee"]) for call in calls}
    assert len(calls) >= 4 and len(callees) < len(calls)      # the 4 blocks share kernels
    run_passes(shared, ["xla-inline-schedule-calls"])
    run_passes(apart, ["xla-apply-schedules{threads=2 vector-bytes=32 share-kernels=false}",
                       "xla-inline-schedule-calls"])
    assert "call @" not in str(shared)
    assert _op_counts(shared) == _op_counts(apart)
    assert len(functions(shared.operation)) == 1


def test_kept_kernels_share_each_destination_with_a_window_of_calls_at_most():
    """The kernels stay functions through bufferization; one tensor.empty
    for every kernel's result (CSE's) made one-shot bufferization check
    each write against every other kernel (a 1,000-op transpose/dot chain:
    14.8 s), so each empty is shared by at most SHARED_EMPTY_WINDOW calls."""
    from xlac.passes.cpu.plans.schedule_functions import SHARED_EMPTY_WINDOW
    module = _linalg(40)
    run_passes(module, ["xla-apply-schedules{threads=2 vector-bytes=32}"])
    empties = [op for op in nested_ops(module.operation) if op.name == "tensor.empty"]
    calls = [op for op in nested_ops(module.operation) if op.name == "func.call"]
    assert len(calls) >= 2 * SHARED_EMPTY_WINDOW      # 79: a dot and a softmax row kernel a block
    for empty in empties:
        readers = {use.owner for use in empty.results[0].uses}
        assert len(readers) <= SHARED_EMPTY_WINDOW


def test_shared_kernels_keep_their_own_lines_in_a_profile():
    """A profile names each block's matmul by its own line, though one
    schedule made them all."""
    exe = xlac.compile(_residual_softmaxes(4), cache=False)
    x, w = np.ones((32, 64), np.float32), np.full((64, 64), 1 / 64, np.float32)
    names = " ".join(exe.profile(x, w, runs=1).names)
    assert all(f"<input>:{4 + 9 * k}:" in names for k in range(4)), names


def test_residual_softmaxes_still_compute_the_same():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    exe = xlac.compile(_residual_softmaxes(6), cache=False)
    want = x.copy()
    for _ in range(6):
        h = want @ w
        e = np.exp(h - h.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True) + want
    np.testing.assert_allclose(np.asarray(exe(x, w)), want, rtol=1e-5, atol=1e-5)


def test_dialects_without_bindings_are_looked_up_once():
    """Reading a stablehlo op must not search the import path each time."""
    searched = []

    class Spy:
        def find_spec(self, name, path=None, target=None):
            searched.append(name)

    module = parse_module(new_context(), _residual_softmaxes(2).encode(), "blocks.mlir")
    sys.meta_path.insert(0, Spy())
    try:
        names = [op.name for op in module.body.operations[0].regions[0].blocks[0].operations]
    finally:
        sys.meta_path.pop(0)
    assert "stablehlo.reduce" in names
    assert searched == []


def _fusion_searches(monkeypatch, ops: int) -> int:
    """Group successor look-ups xla-fuse's cycle checks make on a chain of ``ops``."""
    from xlac.passes.fusion import op_graph
    lines = ["func.func @main(%x0: tensor<8x8xf32>) -> tensor<8x8xf32> {"]
    for k in range(ops):
        op = "stablehlo.sine" if k % 2 else "stablehlo.negate"
        lines.append(f"  %x{k + 1} = {op} %x{k} : tensor<8x8xf32>")
    lines += [f"  return %x{ops} : tensor<8x8xf32>", "}"]
    module = parse_module(new_context(), "\n".join(lines).encode(), "chain.mlir")
    run_passes(module, pipelines.ingest())
    calls = [0]
    real = op_graph.Groups.successors
    monkeypatch.setattr(op_graph.Groups, "successors",
                        lambda self, group: calls.__setitem__(0, calls[0] + 1) or real(self, group))
    run_passes(module, pipelines.fuse())
    monkeypatch.setattr(op_graph.Groups, "successors", real)
    return calls[0]


def _row_group_steps(monkeypatch, steps: int) -> int:
    """Producers fused-rows planning looks at on a chain of ``steps`` x (sine,
    + c, * c) as JAX exports it (xla-fuse cuts it into kernels of ~42 steps), no
    reduction anywhere."""
    t = "tensor<64x64xf32>"
    lines = [f"func.func @main(%x0: {t}) -> {t} {{"]
    for k in range(steps):
        x = f"%x{k}"
        lines += [f"  %s{k} = stablehlo.sine {x} : {t}",
                  f"  %c{k} = stablehlo.constant dense<{k}.0e-06> : tensor<f32>",
                  f"  %b{k} = stablehlo.broadcast_in_dim %c{k}, dims = [] : (tensor<f32>) -> {t}",
                  f"  %a{k} = stablehlo.add %s{k}, %b{k} : {t}",
                  f"  %d{k} = stablehlo.constant dense<1.{k:06d}> : tensor<f32>",
                  f"  %e{k} = stablehlo.broadcast_in_dim %d{k}, dims = [] : (tensor<f32>) -> {t}",
                  f"  %x{k + 1} = stablehlo.multiply %a{k}, %e{k} : {t}"]
    lines += [f"  return %x{steps} : {t}", "}"]
    module = parse_module(new_context(), "\n".join(lines).encode(), "chain.mlir")
    run_passes(module, pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg())
    # kernels, not one: a step weighs 1.5 of max-ops 64 (a sine 1, the add and multiply 1/4 each)
    assert str(module).count("linalg.generic") >= steps // 60
    calls = [0]
    real = fused_rows_plan._may_join
    monkeypatch.setattr(fused_rows_plan, "_may_join",
                        lambda *args: calls.__setitem__(0, calls[0] + 1) or real(*args))
    run_passes(module, ["xla-apply-schedules{threads=2 vector-bytes=32}"])
    return calls[0]


def test_row_groups_of_a_chain_without_reductions_grow_linearly(monkeypatch):
    """Each elementwise kernel's search for a row group stops after
    ROW_GROUP_MAX producers (it walked back through every earlier kernel:
    17,501 chained ops, 0.7 s of planning); the bound made small here, to
    reach it with few kernels."""
    monkeypatch.setattr(fused_rows_plan, "ROW_GROUP_MAX", 4)
    few, many = _row_group_steps(monkeypatch, 400), _row_group_steps(monkeypatch, 1600)
    assert 0 < many <= 6 * few, (few, many)


def test_fusion_cycle_checks_grow_linearly(monkeypatch):
    """Each check prunes the groups past its goal in a kept topological order
    (a chain of 17,501 ops: 90 s of searches, then 5 s), and decides as before."""
    few, many = _fusion_searches(monkeypatch, 200), _fusion_searches(monkeypatch, 800)
    assert 0 < many <= 6 * few, (few, many)      # was quadratic: every later group walked


def _largest_scheduled_function(monkeypatch, blocks: int) -> tuple[int, int]:
    """While the schedules run: the most ops one function holds, and the entry's ops."""
    module = _linalg(blocks)
    seen = []
    real = apply_schedules.interpret

    def measured(copy):
        sizes = {symbol_name(func): len(nested_ops(func)) for func in functions(copy)
                 if "transform" not in str(func.name) and func.name == "func.func"}
        seen.append((max(size for name, size in sizes.items() if name != "main"), sizes["main"]))
        return real(copy)

    monkeypatch.setattr(apply_schedules, "interpret", measured)
    run_passes(module, ["xla-apply-schedules{threads=2 vector-bytes=32}"])
    return seen[0]


def test_each_scheduled_kernel_is_a_function_of_its_own(monkeypatch):
    """A schedule's fuse prints its producer, which numbers and verifies the
    whole function: with every kernel in the entry that was quadratic
    (transpose/dot chain of 500 ops: 6.0 s, 1.3 s apart)."""
    few_kernel, few_entry = _largest_scheduled_function(monkeypatch, 4)
    many_kernel, many_entry = _largest_scheduled_function(monkeypatch, 16)
    assert many_kernel == few_kernel            # a kernel's function does not grow with the program
    assert many_kernel < many_entry


def test_scheduling_apart_gives_the_same_code(monkeypatch):
    """Outlined while scheduled, then put back: the code is what scheduling in place made."""
    apart = _linalg(4)
    run_passes(apart, ["xla-apply-schedules{threads=2 vector-bytes=32}", "xla-inline-schedule-calls"])
    together = _linalg(4)
    monkeypatch.setattr(apply_schedules, "outline_planned", lambda module, planned, share: planned)
    monkeypatch.setattr(apply_schedules, "keep_planned", lambda module, cleaned=False: None)
    run_passes(together, ["xla-apply-schedules{threads=2 vector-bytes=32}"])
    assert "call @" not in str(apart)
    assert _op_counts(apart) == _op_counts(together)


def _op_counts(module) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in nested_ops(module.operation):
        # merged, or copied per kernel (a shared init fill: one per row group or contraction)
        if op.name in ("arith.constant", "ub.poison", "tensor.empty", "linalg.fill") \
                or op.name == "linalg.yield" and op.parent.name == "linalg.fill":
            continue
        counts[op.name] = counts.get(op.name, 0) + 1
    return counts


def _groups(edges: list[tuple[int, int]], size: int):
    """Fusion groups, one per op, on a graph of ``size`` ops with these edges."""
    from xlac.passes.fusion import op_graph
    producers: list[list[int]] = [[] for _ in range(size)]
    users: list[list[int]] = [[] for _ in range(size)]
    for before, after in edges:
        producers[after].append(before)
        users[before].append(after)
    graph = op_graph.BlockGraph([None] * size, ["elementwise"] * size, producers, users,
                                [[] for _ in range(size)], {}, [1] * size, [1.0] * size)
    return op_graph.Groups(graph)


def test_a_merge_moves_the_groups_it_feeds_past_it_instead_of_reordering_all():
    """Op 0 feeds 1, 2 and 3; 1 feeds 2. Merged into 3, the group placed at 3's
    place has 1 and 2 after it, in their order: the order stays true, kept
    without a rebuild (12 rebuilds of every group's successors on ViT)."""
    groups = _groups([(0, 1), (0, 2), (1, 2), (0, 3), (3, 4)], 5)
    groups.move(0, 3)
    assert groups.ordered and groups.reorders == 0
    assert groups.order[3] < groups.order[1] < groups.order[2] < groups.order[4]
    assert all(groups.order[g] < groups.order[s] for g in groups.members for s in groups.successors(g))
    assert not groups.would_cycle(3, 4) and groups.would_cycle(1, 4) is False


def test_a_merge_that_would_cycle_leaves_the_order_to_be_rebuilt():
    """0 feeds 1, which feeds 2: merging 0 and 2 leaves no order true."""
    groups = _groups([(0, 1), (1, 2)], 3)
    groups.move(0, 2)
    assert not groups.ordered
