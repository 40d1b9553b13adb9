// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-own-fills)' | FileCheck %s

/// Two matmuls writing into one (CSE'd) zero fill: the first gets a clone of its
/// own, the last keeps the original; a fill with one user stays as it is.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: %[[OWN:.*]] = linalg.fill
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[OWN]] : tensor<8x8xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[FILL]] : tensor<8x8xf32>)
// CHECK-NOT: linalg.fill
func.func @shared_fill(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = linalg.matmul ins(%b, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// CHECK-LABEL: func.func @own_already
// CHECK-COUNT-1: linalg.fill
func.func @own_already(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
