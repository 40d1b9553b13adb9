"""xla-fuse: the kernels it forms on the benchmark programs and on small
cases, the report that lists them, and results unchanged by fusion."""

from __future__ import annotations

import re
from collections import Counter
from contextlib import nullcontext

import numpy as np
import pytest

import xlac
from conftest import SUITE, require_shared
from xlac.context import new_context
from xlac.errors import collect_diagnostics
from xlac.mlir import ir
from xlac.passes.remarks import collected_remarks, emit_remarks
from xlac.pipeline.pass_manager import build_pass_manager
from xlac.pipeline.pipelines import ingest

# The kernels per program: a reduction reads its producers in one pass, a
# dot takes its bias/activation epilogue, expensive ops are not copied, and
# neither is an op of two inputs (transformer_block's residual add is
# written once, by the layer norm's reduction that reads it: multi-output).
BENCH_FUSIONS = {
    "softmax": {"multi_output": 1, "loop": 1},     # exp+sum (writes exp too), divide
    "layernorm": {"input": 1, "loop": 2},          # variance; rsqrt; normalize+scale+shift
    "mlp": {"output": 2},                          # dot+bias+relu, twice
    "transformer_block": {"input": 3, "loop": 5, "output": 4, "multi_output": 2},
}
NUMPY_RTOL = 2e-4


def fusion_kinds(text: str) -> Counter:
    return Counter(re.findall(r'\{kind = "(\w+)"\}', text))


def relative_error(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-30)


@pytest.mark.parametrize("name", sorted(BENCH_FUSIONS))
def test_bench_program_kernels_and_results(name, workloads):
    path = require_shared("bench", "suite", f"{name}.stablehlo.mlir")
    exe = xlac.compile(path)
    assert fusion_kinds(exe.as_text("fused")) == BENCH_FUSIONS[name]
    workload = workloads.BY_NAME[name]
    inputs = workloads.make_inputs(workload)
    want = workload["numpy"](*inputs)
    assert relative_error(exe.run(*inputs)[0], want) < NUMPY_RTOL


def test_report_lists_kernels_and_rejections():
    require_shared("bench", "suite", "softmax.stablehlo.mlir")
    report = xlac.compile(SUITE / "softmax.stablehlo.mlir").fusion_report()
    assert report.startswith("2 fusion(s), 1 op(s) left as their own kernel")
    assert re.search(r"fusion 0 +multi_output .*exponential.*reduce", report)
    assert re.search(r"4096xf32, 4096x1024xf32 -> 4096x1024xf32, 4096xf32 +33\.6 MB", report)
    assert "producer has 2 consumers and is expensive" in report


def test_report_takes_the_same_remarks_as_diagnostics_say():
    """The report collects xla-fuse's remarks as records (``collected_remarks``),
    not as MLIR diagnostics, whose note prints the op: quadratic in a long
    function. Both channels must say the same, and the collected ones must
    not reach the diagnostics."""
    require_shared("bench", "suite", "softmax.stablehlo.mlir")
    text = (SUITE / "softmax.stablehlo.mlir").read_text()
    said = {}
    for channel in ("diagnostics", "collected"):
        with new_context() as ctx:
            module = ir.Module.parse(text)
            build_pass_manager(ctx, ingest()).run(module.operation)
            sink = collected_remarks() if channel == "collected" else nullcontext([])
            with collect_diagnostics(ctx) as diagnostics, sink as collected:
                build_pass_manager(ctx, ["xla-fuse{remarks=true}"]).run(module.operation)
        records = diagnostics.records if channel == "diagnostics" else collected
        if channel == "collected":
            assert not diagnostics.records
        said[channel] = [(r.location, r.message) for r in records if r.severity == "remark"]
    assert said["diagnostics"], "softmax has a rejected candidate"
    assert said["collected"] == said["diagnostics"]


def test_remarks_on_ops_outside_the_module_are_dropped_not_fatal():
    """One match serves every remark; an op it cannot find (another module's)
    gets none, as a match of its own found nothing, and the rest still come."""
    with new_context() as ctx:
        here = ir.Module.parse("func.func @f() { return }")
        elsewhere = ir.Module.parse("func.func @g() { return }")
        with collect_diagnostics(ctx) as diagnostics:
            emit_remarks(here.operation, [(elsewhere.body.operations[0].operation, "gone"),
                                          (here.body.operations[0].operation, "here")])
    assert [(r.severity, r.message) for r in diagnostics.records] == [("remark", "here")]


SMALL = {
    # loop: bias add + relu
    "loop": ("""
func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %s = stablehlo.add %x, %bb : tensor<4x8xf32>
  %e = stablehlo.tanh %s : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}""", lambda x, b: np.tanh(x + b), [(4, 8), (8,)]),
    # output: dot + bias + relu
    "output": ("""
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
  %s = stablehlo.add %d, %bb : tensor<8x32xf32>
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
  %r = stablehlo.maximum %s, %z : tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}""", lambda x, w, b: np.maximum(x @ w + b, 0), [(8, 16), (16, 32), (32,)]),
    # multi_output: two reductions of one input
    "multi_output": ("""
func.func @main(%x: tensor<8x32xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sq = stablehlo.multiply %x, %x : tensor<8x32xf32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
  %sumsq = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
  return %sum, %sumsq : tensor<8xf32>, tensor<8xf32>
}""", lambda x: (x.sum(1), (x * x).sum(1)), [(8, 32)]),
}


@pytest.mark.parametrize("kind", sorted(SMALL))
def test_small_program_fused_and_correct(kind):
    text, reference, shapes = SMALL[kind]
    exe = xlac.compile(text)
    assert fusion_kinds(exe.as_text("fused")) == {kind: 1}
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape, dtype=np.float32) for shape in shapes]
    want = reference(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    for got, expected in zip(exe.run(*inputs), want):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def run_fuse(text: str, pipeline: str) -> tuple[str, list[str]]:
    """The module after ``pipeline`` and the remarks it emitted."""
    ctx = new_context()
    with ctx, ir.Location.unknown(), collect_diagnostics(ctx) as diagnostics:
        module = ir.Module.parse(text)
        build_pass_manager(ctx, pipeline).run(module.operation)
    return str(module), [d.message for d in diagnostics.records if d.severity == "remark"]


def test_max_ops_limits_a_kernel():
    chain = "\n".join(f"  %v{i + 1} = stablehlo.sine %v{i} : tensor<4xf32>" for i in range(5))
    text = (f"func.func @main(%v0: tensor<4xf32>) -> tensor<4xf32> {{\n{chain}\n"
            "  return %v5 : tensor<4xf32>\n}")
    fused, remarks = run_fuse(text, "builtin.module(xla-fuse{max-ops=3 remarks=true})")
    assert fusion_kinds(fused) == {"loop": 2}          # 3 sines, then 2
    assert any("the fusion already has max-ops=3 ops" in r for r in remarks)


def test_remarks_follow_the_environment(monkeypatch):
    """The pass reads no environment: the pipeline turns the option into its option."""
    from xlac.targets import get_target
    # CUDA keeps a producer kernel apart from its readers (the CPU's merge their loop nests)
    for name, apart in (("cpu", ""), ("cuda", "producer-kernels=false")):
        monkeypatch.setenv("XLAC_FUSION_REMARKS", "1")
        steps = get_target(name).stage_steps("main", xlac.Options.from_env())
        assert steps["fused"][-1] == "xla-fuse{" + " ".join(["remarks=true"] + [apart] * bool(apart)) + "}"
        monkeypatch.delenv("XLAC_FUSION_REMARKS")
        assert get_target(name).stage_steps("main", xlac.Options.from_env())["fused"][-1] == \
            ("xla-fuse{" + apart + "}" if apart else "xla-fuse")


def test_inline_restores_plain_ops_with_their_kernel():
    text, _, _ = SMALL["output"]
    inlined, _ = run_fuse(text, "builtin.module(xla-fuse,xla-inline-fusions)")
    assert "xla.fusion\"" not in inlined
    assert inlined.count('xla.fusion_group = 0 : i64, xla.fusion_kind = "output"') == 6


def test_zero_size_tensors_fuse_without_error():
    exe = xlac.compile("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                       "  %0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<0xf32>\n"
                       "  %1 = stablehlo.exponential %0 : tensor<0xf32>\n"
                       "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
                       "  %2 = stablehlo.reduce(%1 init: %z) applies stablehlo.add across dimensions = [0]"
                       " : (tensor<0xf32>, tensor<f32>) -> tensor<f32>\n"
                       "  return %2 : tensor<f32>\n}")
    assert exe(np.float32(1.0)) == 0.0


def test_a_long_chain_stays_in_kernels_of_at_most_max_ops():
    """xla-fuse cuts a chain of elementwise ops into kernels of 64 ops; linalg's
    own elementwise fusion must not weld them into one loop again (one
    function of every op, which LLVM's -O3 handles in more than linear time).
    The negates weigh a quarter (op_weight): a kernel holds 51 of each pair,
    four kernels in all. The full kernels are the same ops on other buffers:
    one function."""
    ops = 400
    lines = ["func.func @main(%x0: tensor<64x64xf32>) -> tensor<64x64xf32> {"]
    for k in range(ops):
        op = "stablehlo.sine" if k % 2 else "stablehlo.negate"
        lines.append(f"  %x{k + 1} = {op} %x{k} : tensor<64x64xf32>")
    lines += [f"  return %x{ops} : tensor<64x64xf32>", "}"]
    exe = xlac.compile("\n".join(lines), cache=False)
    llvm = exe.as_text("llvm")
    calls, functions = llvm.count("llvm.call @xla_kernel_"), llvm.count("llvm.func @xla_kernel_")
    assert calls >= ops // 2 * 1.25 // 64 and functions <= 3, (calls, functions)
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    want = x.astype(np.float64)
    for k in range(ops):
        want = np.sin(want) if k % 2 else -want
    np.testing.assert_allclose(exe(x), want, rtol=1e-4, atol=1e-5)


def test_integer_ops_count_a_quarter_against_max_ops():
    """A hash of 200 integer adds, xors and shifts (threefry's shape: 140 of
    them in jax.random) is one kernel; max-ops=64 would cut it into four
    passes over memory. Float chains still split at 64 (test above)."""
    ops = 200
    lines = ["func.func @main(%x0: tensor<4096xui32>) -> tensor<4096xui32> {",
             "  %c = stablehlo.constant dense<13> : tensor<4096xui32>"]
    names = ("stablehlo.add", "stablehlo.xor", "stablehlo.shift_left", "stablehlo.shift_right_logical")
    for k in range(ops):
        lines.append(f"  %x{k + 1} = {names[k % 4]} %x{k}, %c : tensor<4096xui32>")
    lines += [f"  return %x{ops} : tensor<4096xui32>", "}"]
    exe = xlac.compile("\n".join(lines), cache=False)
    assert exe.fusion_report().startswith("1 fusion(s)"), exe.fusion_report()
    x = np.random.default_rng(0).integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    want = x.copy()
    with np.errstate(over="ignore"):
        for k in range(ops):
            step = (want + np.uint32(13), want ^ np.uint32(13), want << np.uint32(13), want >> np.uint32(13))
            want = step[k % 4]
    np.testing.assert_array_equal(exe(x), want)


def test_broadcast_scalars_join_a_full_kernel():
    """A broadcast scalar weighs nothing against max-ops and joins a kernel that
    is already full: left out, it was a tensor written out whole for every
    kernel to read (GELU's erfc fills 64 ops; its 0.5 and 1/sqrt(2), shared by
    every layer, were read from two 2.4 MB tensors)."""
    sines = "\n".join(f"  %v{i + 1} = stablehlo.sine %v{i} : tensor<8xf32>" for i in range(1, 5))
    text = ("func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
            "  %c = stablehlo.constant dense<0.5> : tensor<f32>\n"
            "  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8xf32>\n"
            f"  %v1 = stablehlo.multiply %x, %b : tensor<8xf32>\n{sines}\n"
            "  %v6 = stablehlo.multiply %v5, %b : tensor<8xf32>\n"
            "  return %v6 : tensor<8xf32>\n}")
    fused, remarks = run_fuse(text, "builtin.module(xla-fuse{max-ops=3 remarks=true})")
    assert fusion_kinds(fused) == {"loop": 2}
    outside = [line for line in fused.splitlines() if line.startswith("    %") and "xla.fusion" not in line]
    assert not any("broadcast_in_dim" in line for line in outside), fused
    assert fused.count("stablehlo.broadcast_in_dim") == 2     # one copy in each kernel


def test_cheap_float_ops_count_a_quarter_against_max_ops():
    """A series of f32 multiplies, subtracts and adds (a Chebyshev sum's steps,
    three per coefficient) is one kernel; max-ops=64 alone would cut 180 of
    them into three passes over memory. In f16 (widened and narrowed around
    each op) they still count 1."""
    def series(dtype: str, steps: int = 60) -> str:
        lines = [f"func.func @main(%x: tensor<4096x{dtype}>) -> tensor<4096x{dtype}> {{",
                 f"  %c = stablehlo.constant dense<0.25> : tensor<4096x{dtype}>",
                 f"  %b0 = stablehlo.add %x, %c : tensor<4096x{dtype}>"]
        for k in range(steps):
            lines += [f"  %m{k} = stablehlo.multiply %b{k}, %x : tensor<4096x{dtype}>",
                      f"  %s{k} = stablehlo.subtract %m{k}, %c : tensor<4096x{dtype}>",
                      f"  %b{k + 1} = stablehlo.multiply %s{k}, %c : tensor<4096x{dtype}>"]
        return "\n".join(lines + [f"  return %b{steps} : tensor<4096x{dtype}>", "}"])
    fused, _ = run_fuse(series("f32"), "builtin.module(xla-fuse)")
    assert fusion_kinds(fused) == {"loop": 1}
    fused, _ = run_fuse(series("f16"), "builtin.module(xla-fuse)")
    assert sum(fusion_kinds(fused).values()) == 3
    exe = xlac.compile(series("f32"), cache=False)
    x = np.random.default_rng(0).uniform(-1, 1, 4096).astype(np.float32)
    want = x.astype(np.float64) + 0.25
    for _ in range(60):
        want = (want * x - 0.25) * 0.25
    np.testing.assert_allclose(exe(x), want, rtol=1e-5, atol=1e-6)


def test_bessel_series_is_one_kernel_with_its_constants_in_registers():
    """jax.scipy.special.i0e and i1e: ~160 multiplies, subtracts and adds of
    Chebyshev sums. Both are one kernel with their shared sqrt(|x|) (a
    producer kernel joins the kernel that reads it: xla-fuse{producer-kernels}), and
    the 59 coefficients fold into the loop: no buffer is filled with a splat
    (they were a function of their own once canonicalize hoisted them,
    xla-outline-fusions)."""
    jax = pytest.importorskip("jax")
    from jax.scipy.special import i0e, i1e

    def fn(a):
        return i0e(a), i1e(a)

    x = np.random.default_rng(1).uniform(-30, 30, (64, 96)).astype(np.float32)
    exe = xlac.compile(jax.jit(fn).lower(x).as_text(), cache=False)
    report = exe.fusion_report()
    assert report.startswith("1 fusion(s), 0 op(s)"), report
    assert "max-ops" not in report, report
    assert not re.search(r"arith.constant dense<[^>]*> : tensor<64x96xf32>", exe.as_text("linalg"))
    for got, want in zip(exe(x), jax.jit(fn)(x)):
        np.testing.assert_allclose(got, np.asarray(want), rtol=2e-6, atol=1e-7)
