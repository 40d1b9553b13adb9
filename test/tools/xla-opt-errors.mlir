// RUN: not xla-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not xla-opt %s --pass-pipeline='builtin.module(canonicalize' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not xla-opt %s --pass-pipeline='builtin.module(func.func(xla-ingest))' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not xla-opt %s --pass-pipeline='builtin.module(xla-select-entry{bogus=1})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not xla-opt %s --xla-stage=nowhere 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not xla-opt %S/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=FILE

/// Pipeline mistakes are one-line diagnostics that say what to try.
// UNKNOWN: error: 'no-such-pass' does not refer to a registered pass or pass pipeline {{.*}} see xla-opt --list-passes
// SYNTAX: pass pipeline:1:28: error: expected ')', found the end
// NESTED: 'xla-ingest' is an xlac pass and runs on the whole module; move it out of 'func.func(...)'
// OPTION: pass 'xla-select-entry' has no option 'bogus' (options: entry)
// STAGE: error: no stage 'nowhere'
// STAGE: stages: input, stablehlo, fused, linalg, bufferized, llvm
// FILE: error: cannot read file
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
