// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-flatten-reductions)' --split-input-file | FileCheck %s

/// A reduction over the three leading dims becomes a column reduction of a 2-D tensor.
// CHECK-LABEL: func.func @bias_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<64x14x14x32xf32>)
// CHECK: %[[FLAT:.*]] = stablehlo.reshape %[[X]] : (tensor<64x14x14x32xf32>) -> tensor<12544x32xf32>
// CHECK: %[[R:.*]] = stablehlo.reduce(%[[FLAT]] init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<12544x32xf32>, tensor<f32>) -> tensor<32xf32>
// CHECK: return %[[R]]
func.func @bias_gradient(%x: tensor<64x14x14x32xf32>) -> tensor<32xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<64x14x14x32xf32>, tensor<f32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

/// Kept dims merge too, and the result is reshaped back.
// CHECK-LABEL: func.func @rows
// CHECK: stablehlo.reshape {{.*}} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
// CHECK: across dimensions = [1] : (tensor<6x20xf32>, tensor<f32>) -> tensor<6xf32>
// CHECK: stablehlo.reshape {{.*}} : (tensor<6xf32>) -> tensor<2x3xf32>
func.func @rows(%x: tensor<2x3x4x5xf32>) -> tensor<2x3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [2, 3] : (tensor<2x3x4x5xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

/// Alternating dims have nothing to merge.
// CHECK-LABEL: func.func @alternating
// CHECK-NOT: stablehlo.reshape
func.func @alternating(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 2] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
