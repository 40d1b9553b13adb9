// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-whole-carries)' --split-input-file | FileCheck %s

/// A loop started from a slice (a reshaped one) and a branch yielding a slice get
/// copies of their own; a whole tensor is carried as it is.
// CHECK-LABEL: func.func @slices
// CHECK: %[[SLICE:.*]] = tensor.extract_slice
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[SLICE]]
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2xi32>
// CHECK: %[[COPY:.*]] = linalg.copy ins(%[[FLAT]] : tensor<2xi32>) outs(%[[EMPTY]] : tensor<2xi32>)
// CHECK: scf.while (%{{.*}} = %[[COPY]], %{{.*}} = %{{.*}}) :
// CHECK: scf.if
// CHECK: %[[PART:.*]] = tensor.extract_slice
// CHECK: %[[OWN:.*]] = linalg.copy ins(%[[PART]] : tensor<2xi32>)
// CHECK-NEXT: scf.yield %[[OWN]]
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.*}} : tensor<2xi32>
func.func @slices(%keys: tensor<2x2xi32>, %x: tensor<4xf32>, %go: i1) -> tensor<2xi32> {
  %slice = tensor.extract_slice %keys[1, 0] [1, 2] [1, 1] : tensor<2x2xi32> to tensor<1x2xi32>
  %flat = tensor.collapse_shape %slice [[0, 1]] : tensor<1x2xi32> into tensor<2xi32>
  %r:2 = scf.while (%k = %flat, %v = %x) : (tensor<2xi32>, tensor<4xf32>) -> (tensor<2xi32>, tensor<4xf32>) {
    scf.condition(%go) %k, %v : tensor<2xi32>, tensor<4xf32>
  } do {
  ^bb0(%k: tensor<2xi32>, %v: tensor<4xf32>):
    scf.yield %k, %v : tensor<2xi32>, tensor<4xf32>
  }
  %b = scf.if %go -> tensor<2xi32> {
    %part = tensor.extract_slice %keys[0, 0] [1, 2] [1, 1] : tensor<2x2xi32> to tensor<2xi32>
    scf.yield %part : tensor<2xi32>
  } else {
    scf.yield %r#0 : tensor<2xi32>
  }
  return %b : tensor<2xi32>
}
