// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fold-transposes)' --split-input-file | FileCheck %s

/// A weight gradient as JAX emits it: the dot's result transposed. The dot
/// with its operands swapped writes that layout directly.
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[DY:.*]]: tensor<256x1024xf32>, %[[X:.*]]: tensor<256x512xf32>)
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %[[X]], %[[DY]], contracting_dims = [0] x [0], precision = [HIGHEST, DEFAULT] : (tensor<256x512xf32>, tensor<256x1024xf32>) -> tensor<512x1024xf32>
// CHECK-NEXT: return %[[D]]
// CHECK-NOT: stablehlo.transpose
func.func @weight_gradient(%dy: tensor<256x1024xf32>, %x: tensor<256x512xf32>) -> tensor<512x1024xf32> {
  %d = stablehlo.dot_general %dy, %x, contracting_dims = [0] x [0], precision = [DEFAULT, HIGHEST] : (tensor<256x1024xf32>, tensor<256x512xf32>) -> tensor<1024x512xf32>
  %t = stablehlo.transpose %d, dims = [1, 0] : (tensor<1024x512xf32>) -> tensor<512x1024xf32>
  return %t : tensor<512x1024xf32>
}

// -----

/// Batch dims stay first; the free dims of each side swap as groups.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[A:.*]]: tensor<4x8x3x16xf32>, %[[B:.*]]: tensor<4x16x5xf32>)
// CHECK-NEXT: stablehlo.dot_general %[[B]], %[[A]], batching_dims = [0] x [0], contracting_dims = [1] x [3] : (tensor<4x16x5xf32>, tensor<4x8x3x16xf32>) -> tensor<4x5x8x3xf32>
func.func @batched(%a: tensor<4x8x3x16xf32>, %b: tensor<4x16x5xf32>) -> tensor<4x5x8x3xf32> {
  %d = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [3] x [1] : (tensor<4x8x3x16xf32>, tensor<4x16x5xf32>) -> tensor<4x8x3x5xf32>
  %t = stablehlo.transpose %d, dims = [0, 3, 1, 2] : (tensor<4x8x3x5xf32>) -> tensor<4x5x8x3xf32>
  return %t : tensor<4x5x8x3xf32>
}

// -----

/// Left alone: a permutation that is not the swap of the two groups, a dot
/// read by another op too, a transpose of something else.
// CHECK-LABEL: func.func @kept
// CHECK: %[[D1:.*]] = stablehlo.dot_general %arg0, %arg1
// CHECK: stablehlo.transpose %[[D1]], dims = [0, 2, 1]
// CHECK: %[[D2:.*]] = stablehlo.dot_general %arg2, %arg3
// CHECK: stablehlo.transpose %[[D2]], dims = [1, 0]
// CHECK: stablehlo.transpose %arg2, dims = [1, 0]
func.func @kept(%a: tensor<4x8x16xf32>, %b: tensor<16x5xf32>, %c: tensor<8x16xf32>, %d: tensor<16x8xf32>)
    -> (tensor<4x5x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<16x8xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [2] x [0] : (tensor<4x8x16xf32>, tensor<16x5xf32>) -> tensor<4x8x5xf32>
  %1 = stablehlo.transpose %0, dims = [0, 2, 1] : (tensor<4x8x5xf32>) -> tensor<4x5x8xf32>
  %2 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = stablehlo.transpose %c, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return %1, %2, %3, %4 : tensor<4x5x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<16x8xf32>
}

// -----

/// A transpose feeding only a dot's operand is folded into the dot's dimension
/// numbers (a PyTorch Linear's weight, stored [n, k]); one whose operand's free
/// dims would change order, or with another reader, stays.
// CHECK-LABEL: func.func @operand
// CHECK-NOT: stablehlo.transpose %arg1
// CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1] : (tensor<2x1280xf32>, tensor<1000x1280xf32>) -> tensor<2x1000xf32>
// CHECK: %[[T:.*]] = stablehlo.transpose %arg2, dims = [2, 1, 0]
// CHECK: stablehlo.dot_general %arg0, %[[T]]
// CHECK: %[[U:.*]] = stablehlo.transpose %arg3, dims = [1, 0]
// CHECK: stablehlo.dot_general %arg0, %[[U]]
func.func @operand(%x: tensor<2x1280xf32>, %w: tensor<1000x1280xf32>, %v: tensor<3x4x1280xf32>, %s: tensor<1000x1280xf32>)
    -> (tensor<2x1000xf32>, tensor<2x4x3xf32>, tensor<2x1000xf32>, tensor<1280x1000xf32>) {
  %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<1000x1280xf32>) -> tensor<1280x1000xf32>
  %0 = stablehlo.dot_general %x, %wt, contracting_dims = [1] x [0] : (tensor<2x1280xf32>, tensor<1280x1000xf32>) -> tensor<2x1000xf32>
  %vt = stablehlo.transpose %v, dims = [2, 1, 0] : (tensor<3x4x1280xf32>) -> tensor<1280x4x3xf32>
  %1 = stablehlo.dot_general %x, %vt, contracting_dims = [1] x [0] : (tensor<2x1280xf32>, tensor<1280x4x3xf32>) -> tensor<2x4x3xf32>
  %st = stablehlo.transpose %s, dims = [1, 0] : (tensor<1000x1280xf32>) -> tensor<1280x1000xf32>
  %2 = stablehlo.dot_general %x, %st, contracting_dims = [1] x [0] : (tensor<2x1280xf32>, tensor<1280x1000xf32>) -> tensor<2x1000xf32>
  return %0, %1, %2, %st : tensor<2x1000xf32>, tensor<2x4x3xf32>, tensor<2x1000xf32>, tensor<1280x1000xf32>
}
