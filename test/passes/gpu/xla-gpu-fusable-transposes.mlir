// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-fusable-transposes)' --split-input-file | FileCheck %s

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

/// q * scale, then the transpose that splits heads: the transpose becomes a
/// generic reading its input through the inverse permutation.
// CHECK-DAG: #[[$READ:.*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @scaled_heads
// CHECK: %[[Q:.*]] = linalg.generic
// CHECK: linalg.generic {indexing_maps = [#[[$READ]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[Q]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK-NOT: linalg.transpose
func.func @scaled_heads(%q: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x3x4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4xf32>
  %et = tensor.empty() : tensor<4x2x3xf32>
  %t = linalg.transpose ins(%s : tensor<2x3x4xf32>) outs(%et : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  return %t : tensor<4x2x3xf32>
}

// -----

/// A transpose of a function argument feeding a matmul stays a named op
/// (the matmul kernels read it in place).
// CHECK-LABEL: func.func @into_matmul
// CHECK: linalg.transpose
func.func @into_matmul(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%a : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  %m = linalg.matmul ins(%t, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%c : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %m : tensor<3x5xf32>
}

// -----

/// A bias add split into heads, then transposed for the batch matmul (K^T per head,
/// BERT): the bias add is computed on the split shape (its operands split, the
/// broadcast bias read at constant 0 as before) and the transpose, now next to it,
/// becomes a generic that elementwise fusion folds into it.
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$BIAS4:.*]] = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// CHECK-DAG: #[[$KT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-LABEL: func.func @key_heads
// CHECK-DAG: %[[K:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 8, 3, 4] : tensor<2x8x12xf32> into tensor<2x8x3x4xf32>
// CHECK-DAG: %[[B:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 1, 3, 4] : tensor<1x1x12xf32> into tensor<1x1x3x4xf32>
// CHECK: %[[BIASED:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$BIAS4]], #[[$ID4]]]{{.*}} ins(%[[K]], %[[B]] : tensor<2x8x3x4xf32>, tensor<1x1x3x4xf32>)
// CHECK: arith.addf
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[$KT]], #[[$ID4]]]{{.*}} ins(%[[BIASED]] : tensor<2x8x3x4xf32>) outs(%{{.*}} : tensor<2x3x4x8xf32>)
// CHECK: return %[[T]]
// CHECK-NOT: linalg.transpose
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (0, 0, d2)>
func.func @key_heads(%k: tensor<2x8x12xf32>, %b: tensor<1x1x12xf32>) -> tensor<2x3x4x8xf32> {
  %e = tensor.empty() : tensor<2x8x12xf32>
  %s = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k, %b : tensor<2x8x12xf32>, tensor<1x1x12xf32>) outs(%e : tensor<2x8x12xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.addf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<2x8x12xf32>
  %h = tensor.expand_shape %s [[0], [1], [2, 3]] output_shape [2, 8, 3, 4] : tensor<2x8x12xf32> into tensor<2x8x3x4xf32>
  %et = tensor.empty() : tensor<2x3x4x8xf32>
  %t = linalg.transpose ins(%h : tensor<2x8x3x4xf32>) outs(%et : tensor<2x3x4x8xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<2x3x4x8xf32>
}

// -----

/// The split of a function argument is not moved (nothing to fuse with): the
/// transpose stays named for the matmul kernels to read in place.
// CHECK-LABEL: func.func @argument_heads
// CHECK: tensor.expand_shape
// CHECK: linalg.transpose
func.func @argument_heads(%k: tensor<2x8x12xf32>) -> tensor<2x3x4x8xf32> {
  %h = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [2, 8, 3, 4] : tensor<2x8x12xf32> into tensor<2x8x3x4xf32>
  %et = tensor.empty() : tensor<2x3x4x8xf32>
  %t = linalg.transpose ins(%h : tensor<2x8x3x4xf32>) outs(%et : tensor<2x3x4x8xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<2x3x4x8xf32>
}

// -----

/// V per head (`[0, 2, 1, 3]`: heads in front of the tokens, the head dim last)
/// from a bias add that other ops read too: the bias add is not split (it has
/// other readers) and the transpose stays named.
// CHECK-LABEL: func.func @shared_values
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: tensor.expand_shape %[[S]] {{\[}}[0], [1], [2, 3]]
// CHECK: linalg.transpose
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @shared_values(%v: tensor<2x8x12xf32>) -> (tensor<2x3x8x4xf32>, tensor<2x8x12xf32>) {
  %e = tensor.empty() : tensor<2x8x12xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<2x8x12xf32>) outs(%e : tensor<2x8x12xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x8x12xf32>
  %h = tensor.expand_shape %s [[0], [1], [2, 3]] output_shape [2, 8, 3, 4] : tensor<2x8x12xf32> into tensor<2x8x3x4xf32>
  %et = tensor.empty() : tensor<2x3x8x4xf32>
  %t = linalg.transpose ins(%h : tensor<2x8x3x4xf32>) outs(%et : tensor<2x3x8x4xf32>) permutation = [0, 2, 1, 3]
  return %t, %s : tensor<2x3x8x4xf32>, tensor<2x8x12xf32>
}
