// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fold-empty-reductions)' --split-input-file | FileCheck %s

/// Reducing a zero-size dimension gives the init value everywhere.
// CHECK-LABEL: func.func @empty_rows
// CHECK-SAME: (%[[X:.*]]: tensor<2x0xf32>, %[[INIT:.*]]: tensor<f32>)
// CHECK: %[[R:.*]] = stablehlo.broadcast_in_dim %[[INIT]], dims = [] : (tensor<f32>) -> tensor<2xf32>
// CHECK-NOT: stablehlo.reduce
// CHECK: return %[[R]]
func.func @empty_rows(%x: tensor<2x0xf32>, %init: tensor<f32>) -> tensor<2xf32> {
  %r = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [1] : (tensor<2x0xf32>, tensor<f32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

/// A variadic reduce: each result is its own init value.
// CHECK-LABEL: func.func @variadic
// CHECK-SAME: %[[I:[^:]*]]: tensor<f32>, %[[J:[^:]*]]: tensor<i32>
// CHECK-DAG: %[[A:.*]] = stablehlo.broadcast_in_dim %[[I]], dims = [] : (tensor<f32>) -> tensor<f32>
// CHECK-DAG: %[[B:.*]] = stablehlo.broadcast_in_dim %[[J]], dims = [] : (tensor<i32>) -> tensor<i32>
// CHECK: return %[[A]], %[[B]]
func.func @variadic(%x: tensor<0xf32>, %y: tensor<0xi32>, %i: tensor<f32>, %j: tensor<i32>) -> (tensor<f32>, tensor<i32>) {
  %r:2 = stablehlo.reduce(%x init: %i), (%y init: %j) across dimensions = [0] : (tensor<0xf32>, tensor<0xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) {
      %s = stablehlo.add %a, %b : tensor<f32>
      %t = stablehlo.add %c, %d : tensor<i32>
      stablehlo.return %s, %t : tensor<f32>, tensor<i32>
    }
  return %r#0, %r#1 : tensor<f32>, tensor<i32>
}

// -----

/// A reduce with elements is left to upstream.
// CHECK-LABEL: func.func @not_empty
// CHECK: stablehlo.reduce
func.func @not_empty(%x: tensor<3xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
