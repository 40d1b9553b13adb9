// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-weight-gradients-as-one-matmul)' --split-input-file | FileCheck %s

/// A 2x2 filter's weight gradient as xla-canonicalize-convolutions splits it: per tap a
/// transposed slice of the padded input times dY, inserted as row t. One im2col of the
/// unpadded input (the padding its bounds check: mod and a mask), its transpose, one
/// matmul of 8x9 by 9x5 expanded to 4x2x5; no slice, per-tap matmul or pad left.
// CHECK-DAG: #[[$READ:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d1 + d3 + 1) mod 2, (d2 + d4 + 1) mod 2, d5)>
// CHECK-LABEL: func.func @per_tap
// CHECK-NOT: tensor.pad
// CHECK-NOT: tensor<2x1x3x3xf32>
// CHECK-NOT: linalg.fill ins(%{{.*}}) outs(%{{.*}} : tensor<4x2x5xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$READ]], {{.*}}]{{.*}} ins(%arg0, %{{.*}} : tensor<1x2x2x2xf32>, tensor<3x3xi8>) outs(%{{.*}} : tensor<1x3x3x2x2x2xf32>)
// CHECK: %[[A:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<1x3x3x2x2x2xf32> into tensor<9x8xf32>
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<9x8xf32>) outs(%{{.*}} : tensor<8x9xf32>) permutation = [1, 0]
// CHECK: %[[M:.*]] = linalg.matmul {xla.conv = "conv2x2 im2col weight gradient"} ins(%[[AT]], %{{.*}} : tensor<8x9xf32>, tensor<9x5xf32>)
// CHECK-NOT: linalg.matmul
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[G:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2]] output_shape [4, 2, 5] : tensor<8x5xf32> into tensor<4x2x5xf32>
// CHECK: tensor.expand_shape %[[G]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 2, 2, 5]
func.func @per_tap(%x0: tensor<1x2x2x2xf32>, %dy: tensor<1x3x3x5xf32>) -> tensor<2x2x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %x = tensor.pad %x0 low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x2x2x2xf32> to tensor<1x4x4x2xf32>
  %e = tensor.empty() : tensor<2x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %ge = tensor.empty() : tensor<4x2x5xf32>
  %g = linalg.fill ins(%zero : f32) outs(%ge : tensor<4x2x5xf32>) -> tensor<4x2x5xf32>
  %s0 = tensor.extract_slice %x[0, 0, 0, 0] [1, 3, 3, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> to tensor<1x3x3x2xf32>
  %te0 = tensor.empty() : tensor<2x1x3x3xf32>
  %t0 = linalg.transpose ins(%s0 : tensor<1x3x3x2xf32>) outs(%te0 : tensor<2x1x3x3xf32>) permutation = [3, 0, 1, 2]
  %a0 = tensor.collapse_shape %t0 [[0], [1, 2, 3]] : tensor<2x1x3x3xf32> into tensor<2x9xf32>
  %b0 = tensor.collapse_shape %dy [[0, 1, 2], [3]] : tensor<1x3x3x5xf32> into tensor<9x5xf32>
  %m0 = linalg.matmul ins(%a0, %b0 : tensor<2x9xf32>, tensor<9x5xf32>) outs(%f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r0 = tensor.expand_shape %m0 [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %i0 = tensor.insert_slice %r0 into %g[0, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<1x2x5xf32> into tensor<4x2x5xf32>
  %s1 = tensor.extract_slice %x[0, 0, 1, 0] [1, 3, 3, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> to tensor<1x3x3x2xf32>
  %te1 = tensor.empty() : tensor<2x1x3x3xf32>
  %t1 = linalg.transpose ins(%s1 : tensor<1x3x3x2xf32>) outs(%te1 : tensor<2x1x3x3xf32>) permutation = [3, 0, 1, 2]
  %a1 = tensor.collapse_shape %t1 [[0], [1, 2, 3]] : tensor<2x1x3x3xf32> into tensor<2x9xf32>
  %b1 = tensor.collapse_shape %dy [[0, 1, 2], [3]] : tensor<1x3x3x5xf32> into tensor<9x5xf32>
  %m1 = linalg.matmul ins(%a1, %b1 : tensor<2x9xf32>, tensor<9x5xf32>) outs(%f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r1 = tensor.expand_shape %m1 [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %i1 = tensor.insert_slice %r1 into %i0[1, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<1x2x5xf32> into tensor<4x2x5xf32>
  %s2 = tensor.extract_slice %x[0, 1, 0, 0] [1, 3, 3, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> to tensor<1x3x3x2xf32>
  %te2 = tensor.empty() : tensor<2x1x3x3xf32>
  %t2 = linalg.transpose ins(%s2 : tensor<1x3x3x2xf32>) outs(%te2 : tensor<2x1x3x3xf32>) permutation = [3, 0, 1, 2]
  %a2 = tensor.collapse_shape %t2 [[0], [1, 2, 3]] : tensor<2x1x3x3xf32> into tensor<2x9xf32>
  %b2 = tensor.collapse_shape %dy [[0, 1, 2], [3]] : tensor<1x3x3x5xf32> into tensor<9x5xf32>
  %m2 = linalg.matmul ins(%a2, %b2 : tensor<2x9xf32>, tensor<9x5xf32>) outs(%f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r2 = tensor.expand_shape %m2 [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %i2 = tensor.insert_slice %r2 into %i1[2, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<1x2x5xf32> into tensor<4x2x5xf32>
  %s3 = tensor.extract_slice %x[0, 1, 1, 0] [1, 3, 3, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> to tensor<1x3x3x2xf32>
  %te3 = tensor.empty() : tensor<2x1x3x3xf32>
  %t3 = linalg.transpose ins(%s3 : tensor<1x3x3x2xf32>) outs(%te3 : tensor<2x1x3x3xf32>) permutation = [3, 0, 1, 2]
  %a3 = tensor.collapse_shape %t3 [[0], [1, 2, 3]] : tensor<2x1x3x3xf32> into tensor<2x9xf32>
  %b3 = tensor.collapse_shape %dy [[0, 1, 2], [3]] : tensor<1x3x3x5xf32> into tensor<9x5xf32>
  %m3 = linalg.matmul ins(%a3, %b3 : tensor<2x9xf32>, tensor<9x5xf32>) outs(%f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r3 = tensor.expand_shape %m3 [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %i3 = tensor.insert_slice %r3 into %i2[3, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<1x2x5xf32> into tensor<4x2x5xf32>
  %w = tensor.expand_shape %i3 [[0, 1], [2], [3]] output_shape [2, 2, 2, 5] : tensor<4x2x5xf32> into tensor<2x2x2x5xf32>
  return %w : tensor<2x2x2x5xf32>
}

// -----

/// Taps whose slices are not a grid from 0 (tap 3 reads tap 2's): left alone.
// CHECK-LABEL: func.func @not_a_grid
// CHECK: tensor.pad
// CHECK-COUNT-4: linalg.matmul
func.func @not_a_grid(%x0: tensor<1x2x2x2xf32>, %dy: tensor<1x3x3x5xf32>) -> tensor<2x2x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %x = tensor.pad %x0 low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x2x2x2xf32> to tensor<1x4x4x2xf32>
  %e = tensor.empty() : tensor<2x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %ge = tensor.empty() : tensor<4x2x5xf32>
  %g = linalg.fill ins(%zero : f32) outs(%ge : tensor<4x2x5xf32>) -> tensor<4x2x5xf32>
  %s0 = tensor.extract_slice %x[0, 0, 0, 0] [1, 3, 3, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> to tensor<1x3x3x2xf32>
  %te0 = tensor.empty() : tensor<2x1x3x3xf32>
  %t0 = linalg.transpose ins(%s0 : tensor<1x3x3x2xf32>) outs(%te0 : tensor<2x1x3x3xf32>) permutation = [3, 0, 1, 2]
  %a0 = tensor.collapse_shape %t0 [[0], [1, 2, 3]] : tensor<2x1x3x3xf32> into tensor<2x9xf32>
  %b0 = tensor.collapse_shape %dy [[0, 1, 2], [3]] : tensor<1x3x3x5xf32> into tensor<9x5xf32>
  %m0 = linalg.matmul ins(%a0, %b0 : tensor<2x9xf32>, tensor<9x5xf32>) outs(%f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r0 = tensor.expand_shape %m0 [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %i0 = tensor.insert_slice %r0 into %g[0, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<1x2x5xf32> into tensor<4x2x5xf32>
  %s1 = tensor.extract_slice %x[0, 0, 1, 0] [1, 3, 3, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> to tensor<1x3x3x2xf32>
  %te1 = tensor.empty() : tensor<2x1x3x3xf32>
  %t1 = linalg.transpose ins(%s1 : tensor<1x3x3x2xf32>) outs(%te1 : tensor<2x1x3x3xf32>) permutation = [3, 0, 1, 2]
  %a1 = tensor.collapse_shape %t1 [[0], [1, 2, 3]] : tensor<2x1x3x3xf32> into tensor<2x9xf32>
  %b1 = tensor.collapse_shape %dy [[0, 1, 2], [3]] : tensor<1x3x3x5xf32> into tensor<9x5xf32>
  %m1 = linalg.matmul ins(%a1, %b1 : tensor<2x9xf32>, tensor<9x5xf32>) outs(%f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r1 = tensor.expand_shape %m1 [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %i1 = tensor.insert_slice %r1 into %i0[1, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<1x2x5xf32> into tensor<4x2x5xf32>
  %s2 = tensor.extract_slice %x[0, 1, 0, 0] [1, 3, 3, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> to tensor<1x3x3x2xf32>
  %te2 = tensor.empty() : tensor<2x1x3x3xf32>
  %t2 = linalg.transpose ins(%s2 : tensor<1x3x3x2xf32>) outs(%te2 : tensor<2x1x3x3xf32>) permutation = [3, 0, 1, 2]
  %a2 = tensor.collapse_shape %t2 [[0], [1, 2, 3]] : tensor<2x1x3x3xf32> into tensor<2x9xf32>
  %b2 = tensor.collapse_shape %dy [[0, 1, 2], [3]] : tensor<1x3x3x5xf32> into tensor<9x5xf32>
  %m2 = linalg.matmul ins(%a2, %b2 : tensor<2x9xf32>, tensor<9x5xf32>) outs(%f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r2 = tensor.expand_shape %m2 [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %i2 = tensor.insert_slice %r2 into %i1[2, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<1x2x5xf32> into tensor<4x2x5xf32>
  %s3 = tensor.extract_slice %x[0, 1, 0, 0] [1, 3, 3, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> to tensor<1x3x3x2xf32>
  %te3 = tensor.empty() : tensor<2x1x3x3xf32>
  %t3 = linalg.transpose ins(%s3 : tensor<1x3x3x2xf32>) outs(%te3 : tensor<2x1x3x3xf32>) permutation = [3, 0, 1, 2]
  %a3 = tensor.collapse_shape %t3 [[0], [1, 2, 3]] : tensor<2x1x3x3xf32> into tensor<2x9xf32>
  %b3 = tensor.collapse_shape %dy [[0, 1, 2], [3]] : tensor<1x3x3x5xf32> into tensor<9x5xf32>
  %m3 = linalg.matmul ins(%a3, %b3 : tensor<2x9xf32>, tensor<9x5xf32>) outs(%f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r3 = tensor.expand_shape %m3 [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %i3 = tensor.insert_slice %r3 into %i2[3, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<1x2x5xf32> into tensor<4x2x5xf32>
  %w = tensor.expand_shape %i3 [[0, 1], [2], [3]] output_shape [2, 2, 2, 5] : tensor<4x2x5xf32> into tensor<2x2x2x5xf32>
  return %w : tensor<2x2x2x5xf32>
}
