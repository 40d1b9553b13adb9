"""bf16 and f16 on every x86 CPU: computed in f32, rounded in integer code
where the CPU has no bf16 conversion (no libgcc ``__truncsfbf2`` for the JIT
to miss), the same numbers whichever CPU the code was made for, and
contractions accumulated in f32 on the f32 schedules."""

from __future__ import annotations

import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import xlac
from conftest import require_shared, run_conformance, runnable_levels, summarize
from xlac.cpu_model import cpu_model

BF16 = ml_dtypes.bfloat16
PROGRAM = """func.func @main(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  %1 = stablehlo.tanh %0 : tensor<64x64xbf16>
  %2 = stablehlo.cbrt %1 : tensor<64x64xbf16>
  %3 = stablehlo.log_plus_one %2 : tensor<64x64xbf16>
  %4 = stablehlo.divide %3, %x : tensor<64x64xbf16>
  return %4 : tensor<64x64xbf16>
}"""
# f32 -> bf16 rounding or bf16 arithmetic left to LLVM: a libgcc call on CPUs without AVX512-BF16
NEEDS_LIBGCC = re.compile(r"llvm\.(fptrunc|fpext|fadd|fsub|fmul|fdiv|frem|intr\.\w+|call)\b.*\bbf16\b")
INPUTS = [(np.random.default_rng(s).random((64, 64)) + 0.5).astype(BF16) for s in (0, 1)]


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3", "x86-64-v4"])
def test_no_bf16_left_to_llvm_without_native_conversion(cpu):
    text = xlac.compile(PROGRAM, cache=False, cpu=cpu).as_text("llvm")
    assert [line.strip() for line in text.splitlines() if NEEDS_LIBGCC.search(line)] == []


def test_the_same_numbers_on_every_cpu_level():
    results = [xlac.compile(PROGRAM, cache=False, cpu=cpu)(*INPUTS)
               for cpu in runnable_levels("x86-64-v2", "x86-64-v3", "x86-64-v4", "host")]
    for other in results[1:]:
        np.testing.assert_array_equal(other.view(np.uint16), results[0].view(np.uint16))


def test_dots_accumulate_in_f32_and_round_once():
    program = PROGRAM.split("  %1 =")[0] + "  return %0 : tensor<64x64xbf16>\n}"
    got = xlac.compile(program, cache=False)(*INPUTS).astype(np.float32)
    want = (INPUTS[0].astype(np.float32) @ INPUTS[1].astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(got, want.astype(np.float32))


def test_bf16_matmul_takes_the_f32_schedule():
    program = PROGRAM.replace("64", "256").split("  %1 =")[0] + "  return %0 : tensor<256x256xbf16>\n}"
    report = xlac.compile(program, cache=False).fusion_report()
    assert "not scheduled:" not in report, report


@pytest.mark.heavy
def test_bf16_and_f16_conformance_at_the_avx2_level(tmp_path):
    """The public suite's bf16/f16 programs, compiled for x86-64-v3 (AVX2, no AVX512-BF16)."""
    runner = require_shared("conformance", "run_conformance.py")
    results = run_conformance(runner.parent / "xlac_backend.py", tmp_path / "v3.json",
                              "--filter", "bfloat16|float16|bf16|f16", env={"XLAC_CPU": "x86-64-v3"})
    summary = summarize(results)
    failed = [r["id"] for r in results if r["status"] not in ("pass", "skip")]
    assert summary["runnable"] > 100 and failed == [], failed


def test_f16_runs_on_a_cpu_without_f16c():
    """x86-64-v2 (SSE only, no F16C): f16 math in f32 and the conversions as
    integer code; LLVM's own would call __truncsfhf2, which the JIT lacks
    (90 f16 conformance tests failed to link at that level)."""
    text = ("func.func @main(%a: tensor<64xf16>, %b: tensor<64xf16>) -> (tensor<64xf16>, tensor<64xf32>) {\n"
            "  %0 = stablehlo.tanh %a : tensor<64xf16>\n"
            "  %1 = stablehlo.add %0, %b : tensor<64xf16>\n"
            "  %2 = stablehlo.convert %1 : (tensor<64xf16>) -> tensor<64xf32>\n"
            "  return %1, %2 : tensor<64xf16>, tensor<64xf32>\n}")
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 6.0e-8, -6.0e-8, 65504.0]
    a = np.concatenate([special, np.linspace(-4, 4, 56)]).astype(np.float16)
    b = np.concatenate([[1e-4, 2.0, 3.0, 4.0, 0.0, 1e-7, 70000.0, 1.0],
                        np.linspace(-2, 2, 56)]).astype(np.float16)
    exe = xlac.compile(text, cpu="x86-64-v2", cache=False)
    assert "xla_truncf_" in exe.as_text("llvm")              # the integer rounding helper
    sum_, wide = exe(a, b)
    expected = (np.tanh(a.astype(np.float32)).astype(np.float16).astype(np.float32)
                + b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(sum_.view(np.uint16), expected.view(np.uint16))
    np.testing.assert_array_equal(wide, expected.astype(np.float32))


# jnp.pad's padding value: a scalar read from a buffer and passed to the pad
# kernel's function. LLVM passes a 16-bit float scalar widened to f32 and
# narrows it with libgcc (the JIT has no __truncsfbf2): it crosses as bits.
PAD_WITH_SCALAR = """func.func @main(%x: tensor<64x256xTYPE>, %v: tensor<i32>) -> tensor<66x272xTYPE> {
  %0 = stablehlo.convert %v : (tensor<i32>) -> tensor<TYPE>
  %1 = stablehlo.pad %x, %0, low = [1, 8], high = [1, 8], interior = [0, 0] : (tensor<64x256xTYPE>, tensor<TYPE>) -> tensor<66x272xTYPE>
  return %1 : tensor<66x272xTYPE>
}"""


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("type_name, dtype", [("bf16", BF16), ("f16", np.float16)])
def test_a_16_bit_float_scalar_crosses_into_its_kernel(type_name, dtype, cpu):
    exe = xlac.compile(PAD_WITH_SCALAR.replace("TYPE", type_name), cache=False, cpu=cpu)
    assert [line.strip() for line in exe.as_text("llvm").splitlines()
            if NEEDS_LIBGCC.search(line) or re.search(r"llvm\.func @xla_kernel\w*\(.*\b(bf16|f16)\b", line)] == []
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code")
    x = np.random.default_rng(2).standard_normal((64, 256)).astype(dtype)
    np.testing.assert_array_equal(exe(x, np.int32(3)), np.pad(x, ((1, 1), (8, 8)), constant_values=3))


# Where the CPU rounds to bf16 natively (AVX512-BF16) LLVM's instcombine turned
# fptrunc(fadd(fpext a, fpext b)) into bf16 arithmetic, which its X86 backend
# cannot legalize on 16k + 1 lanes: a layer norm over 33 columns aborted the
# process ("Do not know how to soft promote this operator's operand!").
SEVENTEEN_LANES = """llvm.func @add(%p: !llvm.ptr, %q: !llvm.ptr, %o: !llvm.ptr) attributes {
    target_cpu = "x86-64-v4", target_features = #llvm.target_features<[FEATURES]>} {
  %a = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<17xbf16>
  %b = llvm.load %q {alignment = 2 : i64} : !llvm.ptr -> vector<17xbf16>
  %x = llvm.fpext %a : vector<17xbf16> to vector<17xf32>
  %y = llvm.fpext %b : vector<17xbf16> to vector<17xf32>
  %z = llvm.fadd %x, %y : vector<17xf32>
  %t = llvm.fptrunc %z : vector<17xf32> to vector<17xbf16>
  llvm.store %t, %o {alignment = 2 : i64} : vector<17xbf16>, !llvm.ptr
  llvm.return
}"""

_JIT_IN_FRESH_PROCESS = """
import sys
from xlac.mlir import ExecutionEngine, bare_context, ir
from xlac.pipeline.pass_manager import run_passes
with bare_context():
    module = ir.Module.parse(sys.stdin.read())
    run_passes(module, ["xla-bf16-extend-as-shift"])
    engine = ExecutionEngine(module, opt_level=3)
    assert engine.raw_lookup("add")
"""


def test_bf16_widenings_leave_llvm_no_bf16_arithmetic_to_legalize():
    """Compiled (not run) for AVX-512 with AVX512-BF16 on any x86 host, in a
    process of its own: the failure was an abort."""
    features = ", ".join(f'"+{f}"' for f in ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                                             "avx512dq", "avx512vl", "avx512bf16"))
    done = subprocess.run([sys.executable, "-c", _JIT_IN_FRESH_PROCESS], text=True,
                          input=SEVENTEEN_LANES.replace("FEATURES", features),
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("columns", [17, 33])
def test_native_bf16_rows_of_16k_plus_1_match_the_integer_roundings(columns):
    if "avx512_bf16" not in cpu_model("host").features:
        pytest.skip("the host has no AVX512-BF16: its code rounds in integer code, tested above")
    text = (f"func.func @main(%x: tensor<3x{columns}xbf16>, %y: tensor<3x{columns}xbf16>) -> tensor<3x{columns}xbf16> {{\n"
            f"  %0 = stablehlo.multiply %x, %y : tensor<3x{columns}xbf16>\n"
            f"  %1 = stablehlo.add %0, %x : tensor<3x{columns}xbf16>\n"
            f"  return %1 : tensor<3x{columns}xbf16>\n}}")
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((3, columns)).astype(BF16) for _ in range(2))
    native, integer = (xlac.compile(text, cache=False, cpu=cpu)(x, y) for cpu in ("host", "x86-64-v4"))
    np.testing.assert_array_equal(native.view(np.uint16), integer.view(np.uint16))
