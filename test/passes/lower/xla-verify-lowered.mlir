// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-verify-lowered)' --split-input-file --verify-diagnostics

/// A StableHLO op left after lowering is an error at that op.
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %arg0, %arg0 : tensor<4xf32>
  // expected-error @+1 {{'stablehlo.exponential' was not lowered}}
  %1 = stablehlo.exponential %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

/// Fully lowered code passes.
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
