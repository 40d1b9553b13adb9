// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outline-fusions)' --split-input-file | FileCheck %s

/// A kernel under min-ops computing an expensive op (a batch norm's
/// per-channel sqrt) that a convolution's epilogue reads broadcast: a
/// function of its own, so linalg cannot fuse it into the epilogue and redo
/// the sqrt at every output point. The epilogue's own small kernel stays.
// CHECK-LABEL: func.func @main
// CHECK: %[[S:.*]] = call @xla_fusion_0(%{{.*}}) {no_inline, xla.fusion_call} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NOT: call
// CHECK: stablehlo.broadcast_in_dim %[[S]]
// CHECK: func.func private @xla_fusion_0
// CHECK: stablehlo.sqrt
func.func @main(%x: tensor<1x4x4x2xf32>, %w: tensor<1x1x2x8xf32>, %var: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  %eps = stablehlo.constant dense<1.0e-5> : tensor<8xf32>
  %v = stablehlo.add %var, %eps {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<8xf32>
  %s = stablehlo.sqrt %v {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<8xf32>
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64, xla.fusion_group = 1 : i64, xla.fusion_kind = "output"}
       : (tensor<1x4x4x2xf32>, tensor<1x1x2x8xf32>) -> tensor<1x4x4x8xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [3] {xla.fusion_group = 1 : i64, xla.fusion_kind = "output"} : (tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %y = stablehlo.divide %c, %b {xla.fusion_group = 1 : i64, xla.fusion_kind = "output"} : tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}

// -----

/// The same sqrt read by a row kernel (a layer norm's normalization) stays in
/// place: the row schedule computes it once per vector of a row.
// CHECK-LABEL: func.func @rows
// CHECK-NOT: call
func.func @rows(%x: tensor<4x8xf32>, %var: tensor<4xf32>) -> tensor<4x8xf32> {
  %s = stablehlo.sqrt %var {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  %n = stablehlo.negate %s {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  %b = stablehlo.broadcast_in_dim %n, dims = [0] {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"} : (tensor<4xf32>) -> tensor<4x8xf32>
  %y = stablehlo.multiply %x, %b {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

/// An expensive kernel read by a bigger reduction's kernel (the N-body
/// force: 1 / (r2 * sqrt(r2)) per pair, summed over the pairs' x, y, z
/// components): a function of its own, so linalg cannot fuse it into the
/// sum and redo the square root three times a pair.
// CHECK-LABEL: func.func @reduction
// CHECK: %[[P:.*]] = call @xla_fusion_0(%{{.*}}) {no_inline, xla.fusion_call} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: stablehlo.broadcast_in_dim %[[P]]
// CHECK: func.func private @xla_fusion_0
// CHECK: stablehlo.sqrt
func.func @reduction(%r2: tensor<4x4xf32>, %d: tensor<4x4x3xf32>) -> tensor<4x3xf32> {
  %s = stablehlo.sqrt %r2 {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<4x4xf32>
  %p = stablehlo.divide %r2, %s {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<4x4xf32>
  %b = stablehlo.broadcast_in_dim %p, dims = [0, 1] {xla.fusion_group = 1 : i64, xla.fusion_kind = "input"} : (tensor<4x4xf32>) -> tensor<4x4x3xf32>
  %m = stablehlo.multiply %d, %b {xla.fusion_group = 1 : i64, xla.fusion_kind = "input"} : tensor<4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%m init: %zero) applies stablehlo.add across dimensions = [1] {xla.fusion_group = 1 : i64, xla.fusion_kind = "input"} : (tensor<4x4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  return %sum : tensor<4x3xf32>
}
