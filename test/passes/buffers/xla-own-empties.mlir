// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-own-empties)' | FileCheck %s

/// One (CSE'd) empty written by two fills and a transpose: each writer gets an
/// empty of its own, right before it; nothing else changes.
// CHECK-LABEL: func.func @shared_empty
// CHECK-NOT: tensor.empty
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<8x8xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<8x8xf32>)
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: linalg.transpose ins(%{{.*}} : tensor<8x8xf32>) outs(%[[E2]] : tensor<8x8xf32>)
// CHECK-NOT: tensor.empty
func.func @shared_empty(%a: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %empty = tensor.empty() : tensor<8x8xf32>
  %0 = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = linalg.fill ins(%one : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = linalg.transpose ins(%a : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) permutation = [1, 0]
  return %0, %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

/// Each writer's own empty sits right before it, wherever the writer is.
// CHECK-LABEL: func.func @each_before_its_writer
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT: arith.addf
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4xf32>)
func.func @each_before_its_writer(%x: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %empty = tensor.empty() : tensor<4xf32>
  %0 = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %y = arith.addf %x, %x : f32
  %1 = linalg.fill ins(%y : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

/// A writer inside a loop gets its empty inside the loop body; an empty with
/// one user stays alone.
// CHECK-LABEL: func.func @inside_a_loop
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : tensor<4xf32>)
// CHECK-NEXT: scf.for
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4xf32>)
// CHECK-LABEL: func.func @one_user
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
func.func @inside_a_loop(%x: f32, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %empty = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<4xf32> {
    %f = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
    %s = arith.addf %x, %x : f32
    scf.yield %f : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

func.func @one_user(%x: f32) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  %0 = linalg.fill ins(%x : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
