// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-widen-contractions)' --split-input-file | FileCheck %s

/// A bf16 dot reads f32 copies of its operands, accumulates in f32 and rounds once.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xbf16>, %[[B:.*]]: tensor<8x2xbf16>)
// CHECK: %[[A32:.*]] = stablehlo.convert %[[A]] : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[B32:.*]] = stablehlo.convert %[[B]] : (tensor<8x2xbf16>) -> tensor<8x2xf32>
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[A32]], %[[B32]], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK: %[[R:.*]] = stablehlo.convert %[[D]] : (tensor<4x2xf32>) -> tensor<4x2xbf16>
// CHECK: return %[[R]]
func.func @dot(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
  return %0 : tensor<4x2xbf16>
}

// -----

/// An f16 convolution keeps its window and dimension numbers.
// CHECK-LABEL: func.func @conv
// CHECK: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]}
// CHECK-SAME: (tensor<1x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x3x3x4xf32>
// CHECK: stablehlo.convert {{.*}} : (tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf16>
func.func @conv(%x: tensor<1x8x8x4xf16>, %w: tensor<3x3x4x4xf16>) -> tensor<1x3x3x4xf16> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x8x8x4xf16>, tensor<3x3x4x4xf16>) -> tensor<1x3x3x4xf16>
  return %0 : tensor<1x3x3x4xf16>
}

// -----

/// Mixed or wide types are left alone.
// CHECK-LABEL: func.func @f32
// CHECK-NOT: stablehlo.convert
func.func @f32(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
