"""The CUDA passes stay linear in program size, checked by what they read, not
by timing: the op slots the matmul pass's neighbour searches visit per matmul,
the ops an epilogue's inlining walks, the searches that walk the host block
to find an op's place, the symbol tables built (each reads the whole module), and the walks xla-gpu-inline-helpers makes, at 8 and 32
matmuls. (bench/compile_scaling.py and docs/compile-time.md have the times.)"""

from __future__ import annotations

import pytest

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

import xlac  # noqa: E402
import xlac.passes.gpu.gpu_inline_helpers as inline_helpers  # noqa: E402
import xlac.passes.gpu.launch_ops as launch_ops  # noqa: E402
import xlac.passes.gpu.matmul_epilogue as matmul_epilogue  # noqa: E402
import xlac.passes.helper_calls as helper_calls  # noqa: E402
from xlac.targets.cuda.pipeline import bufferize  # noqa: E402


def transpose_dots(count: int) -> str:
    """``count`` rounds of x = transpose(x) . w + b (a matmul with a bias epilogue)."""
    lines = ["func.func @main(%x0: tensor<16x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16x16xf32>)"
             " -> tensor<16x16xf32> {"]
    for i in range(count):
        lines += [f"  %t{i} = stablehlo.transpose %x{i}, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>",
                  f"  %d{i} = stablehlo.dot_general %t{i}, %w, contracting_dims = [1] x [0] "
                  ": (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>",
                  f"  %x{i + 1} = stablehlo.add %d{i}, %b : tensor<16x16xf32>"]
    lines += [f"  return %x{count} : tensor<16x16xf32>", "}"]
    return "\n".join(lines)


class _Counting:
    """``xlac.mlir.ir`` as helper_calls sees it, counting the symbol tables built."""

    def __init__(self, ir):
        self._ir, self.symbol_tables = ir, 0

    def __getattr__(self, name):
        return getattr(self._ir, name)

    def SymbolTable(self, *args):  # noqa: N802 - the bindings' name
        self.symbol_tables += 1
        return self._ir.SymbolTable(*args)


def _reads(monkeypatch, count: int) -> dict:
    orders, walked, rounds, positions = [], [0], [0], [0]
    original_init, original_nested = launch_ops.OpOrder.__init__, matmul_epilogue.nested_ops
    original_position = launch_ops.block_position
    original_calls = inline_helpers._calls_of

    def init(self, module):
        original_init(self, module)
        orders.append(self)

    def nested(op):
        found = original_nested(op)
        walked[0] += len(found)
        return found

    def block_position(op):
        positions[0] += 1
        return original_position(op)

    def calls_of(*args):
        rounds[0] += 1
        return original_calls(*args)

    counting = _Counting(helper_calls.ir)
    with monkeypatch.context() as patch:
        patch.setattr(launch_ops.OpOrder, "__init__", init)
        patch.setattr(matmul_epilogue, "nested_ops", nested)
        patch.setattr(inline_helpers, "_calls_of", calls_of)
        patch.setattr(helper_calls, "ir", counting)
        patch.setattr(launch_ops, "block_position", block_position)
        exe = xlac.compile(transpose_dots(count), target="cuda", cache=False)
    launches = [s for s in exe.function.steps if type(s).__name__ == "Launch"]
    assert len(launches) >= count                     # a matmul kernel each (and the transposes')
    return {"search visits per matmul": sum(o.visits for o in orders) / count,
            "ops walked per epilogue": walked[0] / count,
            "symbol tables": counting.symbol_tables, "inline rounds": rounds[0],
            "block walks": positions[0]}


def test_the_cuda_kernel_passes_read_a_bounded_amount_per_op(monkeypatch):
    small, large = _reads(monkeypatch, 8), _reads(monkeypatch, 32)
    # per matmul the searches look a fixed number of ops around it (fewer near the ends
    # of the block: 15.2 and 16.6 at 10 and 40 matmuls; a search of the whole block would
    # be 4x), and the epilogue's inlining walks its own kernel, not the module
    assert large["search visits per matmul"] <= 1.25 * small["search visits per matmul"], (small, large)
    assert large["ops walked per epilogue"] <= 1.05 * small["ops walked per epilogue"], (small, large)
    # a symbol table reads every symbol: none per kernel (a region's declaration is
    # never an external function), and the inlining's walks do not grow with the calls
    assert large["symbol tables"] == small["symbol tables"] <= 1, (small, large)
    # (one more round: the contractions outlined for the fusion rerun put back)
    assert large["inline rounds"] == small["inline rounds"] <= 4, (small, large)
    # no search finds an op's place by walking its block (one walk per op: quadratic)
    assert large["block walks"] == small["block walks"] == 0, (small, large)


def test_upstream_inline_does_not_run_on_the_kernels():
    """Upstream inline splits the host block at every call (the rest of the block
    spliced twice per call): the CUDA passes' helpers go through xla-gpu-inline-helpers."""
    steps = bufferize()
    assert "inline" not in steps
    last = len(steps) - 1 - steps[::-1].index("xla-gpu-inline-helpers")
    assert last > steps.index("xla-gpu-kernels")
