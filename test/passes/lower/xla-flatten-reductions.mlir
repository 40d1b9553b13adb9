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

/// Reduced dims apart from each other: the outer ones first (a column
/// reduction, the kept dims merged into its rows), then the innermost.
// CHECK-LABEL: func.func @group_norm_sum
// CHECK: %[[FLAT:.*]] = stablehlo.reshape %{{.*}} : (tensor<2x32x32x32x4xf32>) -> tensor<2x1024x128xf32>
// CHECK: %[[PART:.*]] = stablehlo.reduce(%[[FLAT]] init: %{{.*}}) applies stablehlo.add across dimensions = [1] : (tensor<2x1024x128xf32>, tensor<f32>) -> tensor<2x128xf32>
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.add across dimensions = [1] : (tensor<64x4xf32>, tensor<f32>) -> tensor<64xf32>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<64xf32>) -> tensor<2x32xf32>
func.func @group_norm_sum(%x: tensor<2x32x32x32x4xf32>) -> tensor<2x32xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1, 2, 4] : (tensor<2x32x32x32x4xf32>, tensor<f32>) -> tensor<2x32xf32>
  return %0 : tensor<2x32xf32>
}

// -----

/// A max splits whatever its init (seen twice, it changes nothing).
// CHECK-LABEL: func.func @alternating_max
// CHECK: across dimensions = [0] : (tensor<2x12xf32>, tensor<f32>) -> tensor<12xf32>
// CHECK: across dimensions = [1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
func.func @alternating_max(%x: tensor<2x3x4xf32>, %init: tensor<f32>) -> tensor<3xf32> {
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.maximum across dimensions = [0, 2] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

/// Left whole: a sum whose init is not zero (it would be added twice), a
/// product, and a bf16 sum (its partial sums would round to bf16 once more).
// CHECK-LABEL: func.func @kept_whole
// CHECK-NOT: stablehlo.reshape
// CHECK-COUNT-3: stablehlo.reduce
// CHECK-NOT: stablehlo.reduce
func.func @kept_whole(%x: tensor<2x3x4xf32>, %y: tensor<2x3x4xbf16>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xbf16>) {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<bf16>
  %0 = stablehlo.reduce(%x init: %one) applies stablehlo.add across dimensions = [0, 2] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [0, 2] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3xf32>
  %2 = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [0, 2] : (tensor<2x3x4xbf16>, tensor<bf16>) -> tensor<3xbf16>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<3xbf16>
}
