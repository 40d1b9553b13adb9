// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-rewrite-reduce-windows,inline)' --split-input-file | FileCheck %s

/// jnp.cumsum's reduce_window (a whole-dim window padded by n-1) is a scan of
/// log2(n) doubling steps: combine with a copy shifted by 1, 2, 4.
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[S1:.*]] = stablehlo.slice %[[X]] [0:2, 0:7]
// CHECK: %[[P1:.*]] = stablehlo.pad %[[S1]], %{{.*}}, low = [0, 1], high = [0, 0]
// CHECK: %[[V1:.*]] = stablehlo.add %[[X]], %[[P1]]
// CHECK: stablehlo.slice %[[V1]] [0:2, 0:6]
// CHECK: low = [0, 2]
// CHECK: low = [0, 4]
// CHECK-NOT: reduce_window
func.func @cumsum(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %zero) <{padding = dense<[[0, 0], [7, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 8>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

/// A long f32 cumsum from 0 along the last dim (64 = 4 blocks of 16): each
/// block scanned by a dot with a triangle of ones, the block totals (each
/// block's last element) scanned exclusively by a second dot, added back.
// CHECK-LABEL: func.func @long_cumsum
// CHECK-DAG: %[[S:.*]] = stablehlo.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00]{{.*}} : tensor<4x4xf32>
// CHECK-DAG: %[[U:.*]] = stablehlo.constant dense<"0x{{.*}}> : tensor<16x16xf32>
// CHECK: %[[X3:.*]] = stablehlo.reshape %{{.*}} : (tensor<2x64xf32>) -> tensor<2x4x16xf32>
// CHECK: %[[SCAN:.*]] = stablehlo.dot_general %[[X3]], %[[U]], contracting_dims = [2] x [0]
// CHECK: stablehlo.slice %[[SCAN]] [0:2, 0:4, 15:16]
// CHECK: %[[OFF:.*]] = stablehlo.dot_general {{.*}}, %[[S]], contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK: stablehlo.add %[[SCAN]]
// CHECK-NOT: reduce_window
func.func @long_cumsum(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %zero) <{padding = dense<[[0, 0], [63, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

/// A reversed scan (padding after) shifts the other way.
// CHECK-LABEL: func.func @reverse_cummax
// CHECK: stablehlo.slice %{{.*}} [1:4]
// CHECK: low = [0], high = [1]
// CHECK: stablehlo.maximum
func.func @reverse_cummax(%x: tensor<4xf32>) -> tensor<4xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[0, 3]]> : tensor<1x2xi64>, window_dimensions = array<i64: 4>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// A padded max pool gets its padding as a pad by the init value, then an unpadded window.
// CHECK-LABEL: func.func @same_max_pool
// CHECK: stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 0, 0, 0], high = [0, 1, 1, 0]{{.*}} -> tensor<1x9x9x4xf32>
// CHECK: "stablehlo.reduce_window"
// CHECK-SAME: window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>
// CHECK-NOT: padding
func.func @same_max_pool(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x8x8x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
