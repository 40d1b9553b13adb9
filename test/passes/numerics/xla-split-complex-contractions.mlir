// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-split-complex-contractions)' --split-input-file | FileCheck %s

/// A complex dot is four real dots on the parts: re = rr - ii, im = ri + ir.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xcomplex<f32>>, %[[B:.*]]: tensor<8x2xcomplex<f32>>)
// CHECK-DAG: %[[RA:.*]] = stablehlo.real %[[A]] : (tensor<4x8xcomplex<f32>>) -> tensor<4x8xf32>
// CHECK-DAG: %[[IA:.*]] = stablehlo.imag %[[A]] : (tensor<4x8xcomplex<f32>>) -> tensor<4x8xf32>
// CHECK-DAG: %[[RB:.*]] = stablehlo.real %[[B]] : (tensor<8x2xcomplex<f32>>) -> tensor<8x2xf32>
// CHECK-DAG: %[[IB:.*]] = stablehlo.imag %[[B]] : (tensor<8x2xcomplex<f32>>) -> tensor<8x2xf32>
// CHECK: %[[RR:.*]] = stablehlo.dot_general %[[RA]], %[[RB]], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK: %[[II:.*]] = stablehlo.dot_general %[[IA]], %[[IB]]
// CHECK: %[[RI:.*]] = stablehlo.dot_general %[[RA]], %[[IB]]
// CHECK: %[[IR:.*]] = stablehlo.dot_general %[[IA]], %[[RB]]
// CHECK: %[[RE:.*]] = stablehlo.subtract %[[RR]], %[[II]]
// CHECK: %[[IM:.*]] = stablehlo.add %[[RI]], %[[IR]]
// CHECK: %[[C:.*]] = stablehlo.complex %[[RE]], %[[IM]] : tensor<4x2xcomplex<f32>>
// CHECK: return %[[C]]
func.func @dot(%a: tensor<4x8xcomplex<f32>>, %b: tensor<8x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xcomplex<f32>>, tensor<8x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
  return %0 : tensor<4x2xcomplex<f32>>
}

// -----

/// A complex<f64> convolution keeps its window and dimension numbers on f64 parts.
// CHECK-LABEL: func.func @conv
// CHECK-COUNT-4: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {{.*}} -> tensor<1x3x3x4xf64>
// CHECK: stablehlo.complex {{.*}} : tensor<1x3x3x4xcomplex<f64>>
func.func @conv(%x: tensor<1x8x8x4xcomplex<f64>>, %w: tensor<3x3x4x4xcomplex<f64>>) -> tensor<1x3x3x4xcomplex<f64>> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x8x8x4xcomplex<f64>>, tensor<3x3x4x4xcomplex<f64>>) -> tensor<1x3x3x4xcomplex<f64>>
  return %0 : tensor<1x3x3x4xcomplex<f64>>
}

// -----

/// Real contractions are left alone.
// CHECK-LABEL: func.func @real
// CHECK-NOT: stablehlo.real
func.func @real(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
