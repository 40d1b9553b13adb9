// RUN: xla-opt %s --split-input-file --pass-pipeline='builtin.module(canonicalize)' | FileCheck %s
// RUN: cat %s | xla-opt - --split-input-file | FileCheck %s --check-prefix=STDIN
// RUN: xla-opt %s --split-input-file -o %t.mlir && FileCheck %s --check-prefix=STDIN --input-file=%t.mlir
// RUN: xla-opt %S/Inputs/scale.mlir --pass-pipeline='builtin.module(xla-ingest,func.func(cse))' --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: rm -rf %t.dir && xla-opt %S/Inputs/scale.mlir --pass-pipeline='builtin.module(xla-ingest)' --mlir-print-ir-tree-dir=%t.dir >/dev/null && ls -R %t.dir | FileCheck %s --check-prefix=TREE
// RUN: xla-opt %S/Inputs/scale.mlir --pass-pipeline='builtin.module(xla-ingest)' --mlir-timing 2>&1 >/dev/null | FileCheck %s --check-prefix=TIMING
// RUN: xla-opt --list-passes | FileCheck %s --check-prefix=LIST
// RUN: xla-opt %S/Inputs/scale.mlir --emit-bytecode -o %t.mlirbc && xla-opt %t.mlirbc | FileCheck %s --check-prefix=BYTECODE

/// Chunks are processed one by one and joined with the separator.
// CHECK-LABEL: func.func @first
// CHECK: // -----
// CHECK-LABEL: func.func @second
// STDIN: @first
// BYTECODE: func.func @double
// AFTER: IR Dump After
// AFTER-SAME: xla-select-entry
// AFTER: IR Dump After CSE
// TREE: xla-select-entry
// TIMING: Execution time report
// TIMING: xla-check-support
// LIST: xla-select-entry
// LIST: xla-cpu-pipeline
// LIST: stages (--target, --xla-stage, Executable.as_text):
// LIST-NEXT: cpu input, stablehlo, fused, linalg, bufferized, llvm
// LIST-NEXT: cuda input, stablehlo, fused, linalg, gpu-loops, kernels, gpu, ptx
// LIST-NEXT: reference input, stablehlo
func.func @first(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}

// -----

func.func @second(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
