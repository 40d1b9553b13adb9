// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-expand-constant-powers,inline,canonicalize)' --split-input-file | FileCheck %s

/// The N-body softening: x^-1.5 as 1 / (|x| * sqrt(x)), sqrt's -0 made +0,
/// and +0 at x = -inf (where sqrt is NaN); no stablehlo.power left.
// CHECK-LABEL: func.func @minus_three_halves
// CHECK-DAG: %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[ROOT:.*]] = stablehlo.sqrt %arg0
// CHECK: %[[S:.*]] = stablehlo.add %[[ROOT]], %[[ZERO]]
// CHECK: %[[ABS:.*]] = stablehlo.abs %arg0
// CHECK: %[[M:.*]] = stablehlo.multiply %[[ABS]], %[[S]]
// CHECK: %[[P:.*]] = stablehlo.divide %[[ONE]], %[[M]]
// CHECK: %[[FINITE:.*]] = stablehlo.is_finite %arg0
// CHECK: stablehlo.select %{{.*}}, %[[ZERO]], %[[P]]
// CHECK-NOT: stablehlo.power
func.func @minus_three_halves(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<-1.500000e+00> : tensor<f32>
  %e = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %0 = stablehlo.power %x, %e : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// A splat exponent of 2: one multiply.
// CHECK-LABEL: func.func @square
// CHECK-NEXT: %[[SQ:.*]] = stablehlo.multiply %arg0, %arg0 : tensor<2x3xf64>
// CHECK-NEXT: return %[[SQ]]
func.func @square(%x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %e = stablehlo.constant dense<2.0> : tensor<2x3xf64>
  %0 = stablehlo.power %x, %e : tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// -----

/// Left to pow: another exponent, an exponent that varies, a narrow type.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: stablehlo.power
func.func @kept(%x: tensor<4xf32>, %y: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf16>) {
  %e = stablehlo.constant dense<3.0> : tensor<4xf32>
  %0 = stablehlo.power %x, %e : tensor<4xf32>
  %1 = stablehlo.power %x, %y : tensor<4xf32>
  %eh = stablehlo.constant dense<0.5> : tensor<4xf16>
  %2 = stablehlo.power %h, %eh : tensor<4xf16>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf16>
}

// -----

/// A power in one of xla-fuse's kernels: the ops replacing it carry that
/// kernel's tags, so they stay its ops once inlined (xla-outline-fusions
/// reads them).
// CHECK-LABEL: func.func @tagged
// CHECK: stablehlo.sqrt %arg0 {xla.fusion_group = 2 : i64, xla.fusion_kind = "loop"}
// CHECK: stablehlo.divide %{{.*}}, %{{.*}} {xla.fusion_group = 2 : i64, xla.fusion_kind = "loop"}
// CHECK: stablehlo.select %{{.*}} {xla.fusion_group = 2 : i64, xla.fusion_kind = "loop"}
func.func @tagged(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<-1.500000e+00> : tensor<4xf32>
  %0 = stablehlo.power %x, %c {xla.fusion_group = 2 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
