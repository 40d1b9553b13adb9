"""bench/llvm_kinds.py's parts on tiny inputs (in this process: quick)."""

from __future__ import annotations

import importlib
import sys

from conftest import REPO

_REPORT = """===-------------------------------------------------------------------------===
                          Pass execution timing report
===-------------------------------------------------------------------------===
  Total Execution Time: 0.5767 seconds (0.9950 wall clock)

   ---User Time---   --System Time--   --User+System--   ---Wall Time---  --- Name ---
   0.0452 (  8.7%)   0.0002 (  0.3%)   0.0453 (  7.9%)   0.1116 ( 11.2%)  Loop Strength Reduction #2
   0.0284 (  5.5%)   0.0005 (  0.9%)   0.0289 (  5.0%)   0.0616 (  6.2%)  X86 DAG->DAG Instruction Selection #13
   0.0123 (  2.4%)   0.0000 (  0.1%)   0.0124 (  2.1%)   0.0244 (  2.4%)  Loop Strength Reduction
   0.5191 (100.0%)   0.0576 (100.0%)   0.5767 (100.0%)   0.9950 (100.0%)  Total

===-------------------------------------------------------------------------===
                      Instruction Selection and Scheduling
===-------------------------------------------------------------------------===
   0.0204 ( 20.9%)   0.0025 ( 25.8%)   0.0229 ( 21.4%)   0.0408 ( 24.7%)  Instruction Selection
"""


def _tool():
    if str(REPO / "bench") not in sys.path:         # the tool imports llvm_work beside it
        sys.path.insert(0, str(REPO / "bench"))
    return importlib.import_module("llvm_kinds")


def test_a_pass_s_instances_are_summed_within_its_section_only():
    sums = _tool().summed_pass_times(_REPORT)
    assert sums == {"Loop Strength Reduction": 0.0453 + 0.0124,
                    "X86 DAG->DAG Instruction Selection": 0.0289}


def test_kernels_are_told_apart_by_what_llvm_gets():
    kind = _tool().kernel_kind
    fmas = "\n".join(["llvm.intr.fma(%a, %b, %c)"] * 16)
    assert kind("main", "llvm.func @main() { omp.parallel }") == "entry"
    assert kind("k0", "llvm.call @xlac_ukernel_f32_8x32(%0)") == "contraction"
    assert kind("k1", "omp.wsloop {\n" + fmas + "}") == "contraction"
    assert kind("k2", "omp.wsloop { llvm.intr.fma(%a, %b, %c) }") == "parallel"
    assert kind("k3", "llvm.load %p : !llvm.ptr -> vector<16xf32>") == "serial"
    assert kind("k4", "llvm.call @xla_parallel_for_0(%0, %1, %2, %3, %4)") == "parallel"


def test_a_kernel_s_loop_bodies_count_as_its_own():
    tool = _tool()
    fmas = "\n".join(["llvm.intr.fma(%a, %b, %c)"] * 16)
    texts = {"k0": "%f = llvm.mlir.addressof @k0_chunk_0 : !llvm.ptr\nllvm.call @xla_parallel_for_0(%f)",
             "k0_chunk_0": "llvm.func internal @k0_chunk_0 {\n" + fmas + "}",
             "xla_parallel_for_0": "llvm.func internal @xla_parallel_for_0 { omp.parallel }"}
    assert tool.loop_bodies("k0", texts) == ["k0_chunk_0"]
    assert tool.kernel_kind("k0", tool.with_loop_bodies("k0", texts)) == "contraction"
