// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-own-empties{group=2})' | FileCheck %s

/// One (CSE'd) empty written by five ops: in program order, each two share
/// an empty (the first two the original), each clone next to the original.
// CHECK-LABEL: func.func @shared_empty
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<8x8xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<8x8xf32>)
// CHECK-NEXT: linalg.transpose ins(%{{.*}} : tensor<8x8xf32>) outs(%[[E1]] : tensor<8x8xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<8x8xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<8x8xf32>)
// CHECK-NOT: tensor.empty
func.func @shared_empty(%a: tensor<8x8xf32>, %x: f32) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %empty = tensor.empty() : tensor<8x8xf32>
  %0 = linalg.fill ins(%x : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = linalg.fill ins(%x : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = linalg.transpose ins(%a : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) permutation = [1, 0]
  %3 = linalg.fill ins(%x : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = linalg.fill ins(%x : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0, %1, %2, %3, %4 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

/// A window reaching into a loop body: its empty stays outside, next to the
/// original, where it dominates the writers both in and after the loop.
// CHECK-LABEL: func.func @into_a_loop
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK: scf.for
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4xf32>)
func.func @into_a_loop(%x: f32, %n: index) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %empty = tensor.empty() : tensor<4xf32>
  %a = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %init = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<4xf32> {
    %f = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %f : tensor<4xf32>
  }
  %b = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  return %a, %r, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

/// No more users than a window: nothing changes.
// CHECK-LABEL: func.func @few_users
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
func.func @few_users(%x: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %empty = tensor.empty() : tensor<4xf32>
  %0 = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %1 = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
