// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-contiguous-contraction-operands)' --split-input-file | FileCheck %s

/// A complex part (every second f32 of the pairs) read by two matmuls: one
/// identity copy, made right after the view, feeds both.
// CHECK-LABEL: func.func @part
// CHECK: %[[V:.*]] = tensor.collapse_shape
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[C:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK: linalg.matmul ins(%[[C]], %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>)
// CHECK: linalg.matmul ins(%[[C]], %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>)
// CHECK-NOT: linalg.generic
func.func @part(%pairs: tensor<4x8x2xf32>, %b: tensor<8x2xf32>, %c: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %s = tensor.extract_slice %pairs[0, 0, 0] [4, 8, 1] [1, 1, 1] : tensor<4x8x2xf32> to tensor<4x8x1xf32>
  %v = tensor.collapse_shape %s [[0], [1, 2]] : tensor<4x8x1xf32> into tensor<4x8xf32>
  %0 = linalg.matmul ins(%v, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = linalg.matmul ins(%v, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

/// Rows of a matrix are one contiguous block: no copy.
// CHECK-LABEL: func.func @rows
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>)
func.func @rows(%a: tensor<16x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %v = tensor.extract_slice %a[4, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  %0 = linalg.matmul ins(%v, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

/// A block of columns has gaps between its rows only (the packing reads
/// rows as they are): no copy. A step along the rows: copied.
// CHECK-LABEL: func.func @columns
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: linalg.matmul ins(%[[C]], %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>)
func.func @columns(%a: tensor<4x16xf32>, %b: tensor<8x2xf32>, %c: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %v = tensor.extract_slice %a[0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %0 = linalg.matmul ins(%v, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  %w = tensor.extract_slice %a[0, 0] [4, 8] [1, 2] : tensor<4x16xf32> to tensor<4x8xf32>
  %1 = linalg.matmul ins(%w, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}
