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
