// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-spread-readonly-reads{group=2})' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-spread-readonly-reads{group=2},one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize)' --split-input-file | FileCheck %s --check-prefix=BUF

/// The third reader of a read-only argument (group=2) reads a new alias of it,
/// made at the block's start; the first two read the argument itself.
// CHECK-LABEL: func.func @readers
// CHECK-SAME: (%[[W:[a-z0-9]+]]: tensor<4xf32>
// CHECK: %[[B:.*]] = bufferization.to_buffer %[[W]] read_only : tensor<4xf32> to memref<4xf32>
// CHECK: %[[W2:.*]] = bufferization.to_tensor %[[B]] restrict : memref<4xf32> to tensor<4xf32>
// CHECK: tensor.extract %[[W]][
// CHECK: tensor.extract %[[W]][
// CHECK: tensor.extract %[[W2]][
/// Bufferized, the alias is the argument's buffer again: no copy.
// BUF-LABEL: func.func @readers
// BUF-SAME: (%[[W:[a-z0-9]+]]: memref<4xf32>
// BUF-NOT: bufferization.to_tensor
// BUF-NOT: memref.copy
// BUF-COUNT-3: memref.load %[[W]][
func.func @readers(%w: tensor<4xf32> {bufferization.writable = false}) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %0 = tensor.extract %w[%c0] : tensor<4xf32>
  %1 = tensor.extract %w[%c1] : tensor<4xf32>
  %2 = tensor.extract %w[%c2] : tensor<4xf32>
  return %0, %1, %2 : f32, f32, f32
}

// -----

/// A writable argument, or one read by no more than a group, is left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: bufferization.to_tensor
// CHECK: return
func.func @left_alone(%w: tensor<4xf32>, %r: tensor<4xf32> {bufferization.writable = false}) -> (f32, f32, f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %0 = tensor.extract %w[%c0] : tensor<4xf32>
  %1 = tensor.extract %w[%c0] : tensor<4xf32>
  %2 = tensor.extract %w[%c0] : tensor<4xf32>
  %3 = tensor.extract %r[%c0] : tensor<4xf32>
  %4 = tensor.extract %r[%c0] : tensor<4xf32>
  return %0, %1, %2, %3, %4 : f32, f32, f32, f32, f32
}
