// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-results-in-slices)' --split-input-file | FileCheck %s

/// Two results inserted in a chain into one destination: each init becomes
/// the destination's slice its result is inserted at.
// CHECK-LABEL: func.func @chain
// CHECK: %[[D:.*]] = bufferization.alloc_tensor() : tensor<2x4x8xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[D]][0, 0, 0] [1, 4, 8] [1, 1, 1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[D]][1, 0, 0] [1, 4, 8] [1, 1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[S0]], %[[S1]] :
func.func @chain(%x: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %d = bufferization.alloc_tensor() : tensor<2x4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e, %e : tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: f32, %o0: f32, %o1: f32):
    %n = arith.negf %a : f32
    linalg.yield %a, %n : f32, f32
  } -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %i0 = tensor.insert_slice %r#0 into %d[0, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<2x4x8xf32>
  %i1 = tensor.insert_slice %r#1 into %i0[1, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<2x4x8xf32>
  return %i1 : tensor<2x4x8xf32>
}

// -----

/// A result read by something else too: left alone.
// CHECK-LABEL: func.func @other_use
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic
func.func @other_use(%x: tensor<4x8xf32>) -> (tensor<2x4x8xf32>, tensor<4x8xf32>) {
  %d = bufferization.alloc_tensor() : tensor<2x4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e, %e : tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: f32, %o0: f32, %o1: f32):
    %n = arith.negf %a : f32
    linalg.yield %a, %n : f32, f32
  } -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %i0 = tensor.insert_slice %r#0 into %d[0, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<2x4x8xf32>
  %i1 = tensor.insert_slice %r#1 into %i0[1, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<2x4x8xf32>
  return %i1, %r#0 : tensor<2x4x8xf32>, tensor<4x8xf32>
}
