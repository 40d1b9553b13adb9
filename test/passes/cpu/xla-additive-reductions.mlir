// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-additive-reductions)' --split-input-file | FileCheck %s

#rows = affine_map<(d0, d1) -> (d1, d0)>
#out = affine_map<(d0, d1) -> (d0)>

/// A sum of negated elements, as canonicalization leaves it (`out - v`): it
/// yields `out + (-v)`, a combining kind the vectorizer knows.
// CHECK-LABEL: func.func @negated_sum
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK: %[[NEG:.*]] = arith.negf %[[IN]] : f32
// CHECK: %[[ADD:.*]] = arith.addf %[[OUT]], %[[NEG]] : f32
// CHECK-NOT: arith.subf
// CHECK: linalg.yield %[[ADD]]
func.func @negated_sum(%x: tensor<8x4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#rows, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.subf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

/// `v - out` is no sum, and an element-wise subtraction is no reduction: both stay.
// CHECK-LABEL: func.func @left_alone
// CHECK: arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: arith.subf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.negf
#red = affine_map<(d0) -> ()>
func.func @left_alone(%x: tensor<4xf32>, %init: tensor<f32>, %y: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %r = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction"]}
      ins(%x : tensor<4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.subf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%y : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.subf %o, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %e : tensor<f32>, tensor<4xf32>
}
