// RUN: xla-opt %s --split-input-file --verify-diagnostics
// RUN: not xla-opt %s --split-input-file 2>&1 | FileCheck %s

/// Parse and verifier errors land on the line of the offending op.
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{custom op 'stablehlo.frobnicate' is unknown}}
  %0 = stablehlo.frobnicate %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{type of return operand 0 ('tensor<2xf32>') doesn't match function result type ('tensor<3xf32>')}}
  return %a : tensor<2xf32>
}

// CHECK: xla-opt-verify-diagnostics.mlir:7:{{[0-9]+}}: error: custom op 'stablehlo.frobnicate' is unknown
// CHECK: xla-opt-verify-diagnostics.mlir:15:3: error: type of return operand 0
