// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-split-f64-truncation)' --split-input-file | FileCheck %s

/// f64 -> f16 goes through f32 rounded to odd: an inexact f32 result gets its
/// last bit set (after stepping toward zero if it was rounded away).
// CHECK-LABEL: func.func private @xla_f64_to_f16_0(
// CHECK-SAME: %[[X:.*]]: tensor<4xf64>) -> tensor<4xf16>
// CHECK: %[[NEAR:.*]] = stablehlo.convert %[[X]] : (tensor<4xf64>) -> tensor<4xf32>
// CHECK: %[[BACK:.*]] = stablehlo.convert %[[NEAR]] : (tensor<4xf32>) -> tensor<4xf64>
// CHECK: %[[INEXACT:.*]] = stablehlo.compare NE, %[[BACK]], %[[X]]
// CHECK: %[[AWAY:.*]] = stablehlo.compare GT
// CHECK: %[[BITS:.*]] = stablehlo.bitcast_convert %[[NEAR]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK: %[[TOWARD:.*]] = stablehlo.select %[[AWAY]]
// CHECK: %[[ODD:.*]] = stablehlo.or %[[TOWARD]]
// CHECK: %[[CHOSEN:.*]] = stablehlo.select %[[INEXACT]], %[[ODD]], %[[BITS]]
// CHECK: %[[NARROW:.*]] = stablehlo.bitcast_convert %[[CHOSEN]] : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: %[[R:.*]] = stablehlo.convert %[[NARROW]] : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @to_f16
// CHECK: %[[H:.*]] = call @xla_f64_to_f16_0(%{{.*}}) : (tensor<4xf64>) -> tensor<4xf16>
// CHECK-NOT: stablehlo.convert
// CHECK: return %[[H]]
func.func @to_f16(%x: tensor<4xf64>) -> tensor<4xf16> {
  %h = stablehlo.convert %x : (tensor<4xf64>) -> tensor<4xf16>
  return %h : tensor<4xf16>
}

// -----

/// bf16 from a scalar f64 too; f64 -> f32 and f32 -> bf16 are left to upstream.
// CHECK-LABEL: func.func private @xla_f64_to_bf16_0(
// CHECK-SAME: tensor<f64>) -> tensor<bf16>
// CHECK-LABEL: func.func @to_bf16
// CHECK: call @xla_f64_to_bf16_0
// CHECK: stablehlo.convert %{{.*}} : (tensor<f64>) -> tensor<f32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<f32>) -> tensor<bf16>
func.func @to_bf16(%x: tensor<f64>) -> (tensor<bf16>, tensor<f32>, tensor<bf16>) {
  %b = stablehlo.convert %x : (tensor<f64>) -> tensor<bf16>
  %f = stablehlo.convert %x : (tensor<f64>) -> tensor<f32>
  %g = stablehlo.convert %f : (tensor<f32>) -> tensor<bf16>
  return %b, %f, %g : tensor<bf16>, tensor<f32>, tensor<bf16>
}
