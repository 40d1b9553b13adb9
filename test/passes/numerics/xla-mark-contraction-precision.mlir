// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-mark-contraction-precision)' --split-input-file | FileCheck %s

/// HIGHEST on either operand: the dot is marked, so that cuda's library matmul
/// computes it in full f32 even where matmul_precision asks for TF32.
// CHECK-LABEL: func.func @highest
// CHECK: stablehlo.dot_general {{.*}} {xla.precision = "highest"}
func.func @highest(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

/// DEFAULT, or no precision_config at all: no mark.
// CHECK-LABEL: func.func @default
// CHECK-NOT: xla.precision
func.func @default(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}
