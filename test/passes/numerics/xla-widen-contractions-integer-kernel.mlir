// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-widen-contractions{integer-kernel=true})' --split-input-file | FileCheck %s

/// With an integer kernel (the CPU at x86-64-v3/-v4) an 8-bit dot the kernel
/// takes (a plain matmul, m x n x k >= 2^20, m and n >= 16) is one i32 dot over
/// its whole k (3000: six f32 chunks without the kernel), no f32 anywhere.
// CHECK-LABEL: func.func @whole_k
// CHECK-NOT: f32
// CHECK: stablehlo.convert %{{.*}} : (tensor<64x3000xi8>) -> tensor<64x3000xi32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<3000x48xui8>) -> tensor<3000x48xi32>
// CHECK: %[[D:.*]] = stablehlo.dot_general {{.*}} -> tensor<64x48xi32>
// CHECK-NOT: stablehlo.slice
// CHECK-NEXT: return %[[D]]
func.func @whole_k(%a: tensor<64x3000xi8>, %b: tensor<3000x48xui8>) -> tensor<64x48xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x3000xi8>, tensor<3000x48xui8>) -> tensor<64x48xi32>
  return %0 : tensor<64x48xi32>
}

// -----

/// jnp's `a.astype(int32) @ b.astype(int32)` of 8-bit integers, batched: the
/// same one i32 dot over the 8-bit values.
// CHECK-LABEL: func.func @extended_batched
// CHECK-NOT: f32
// CHECK: stablehlo.dot_general {{.*}} : (tensor<2x64x3000xi32>, tensor<2x3000x48xi32>) -> tensor<2x64x48xi32>
func.func @extended_batched(%a: tensor<2x64x3000xui8>, %b: tensor<2x3000x48xi8>) -> tensor<2x64x48xi32> {
  %a32 = stablehlo.convert %a : (tensor<2x64x3000xui8>) -> tensor<2x64x3000xi32>
  %b32 = stablehlo.convert %b : (tensor<2x3000x48xi8>) -> tensor<2x3000x48xi32>
  %0 = stablehlo.dot_general %a32, %b32, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x64x3000xi32>, tensor<2x3000x48xi32>) -> tensor<2x64x48xi32>
  return %0 : tensor<2x64x48xi32>
}

// -----

/// An i64 result: one i32 dot while every sum of k products fits an i32
/// (3000 x 2^14), sign-extended after.
// CHECK-LABEL: func.func @i64_within_i32
// CHECK: %[[D:.*]] = stablehlo.dot_general {{.*}} -> tensor<64x48xi32>
// CHECK: stablehlo.convert %[[D]] : (tensor<64x48xi32>) -> tensor<64x48xi64>
func.func @i64_within_i32(%a: tensor<64x3000xi8>, %b: tensor<3000x48xi8>) -> tensor<64x48xi64> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x3000xi8>, tensor<3000x48xi8>) -> tensor<64x48xi64>
  return %0 : tensor<64x48xi64>
}

// -----

/// ... not where a sum could pass an i32 (k 2^18 x 2^14 > 2^31): the chunks.
// CHECK-LABEL: func.func @i64_past_i32
// CHECK: stablehlo.dot_general {{.*}} -> tensor<16x16xf32>
func.func @i64_past_i32(%a: tensor<16x262144xi8>, %b: tensor<262144x16xi8>) -> tensor<16x16xi64> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<16x262144xi8>, tensor<262144x16xi8>) -> tensor<16x16xi64>
  return %0 : tensor<16x16xi64>
}

// -----

/// B contracted on its last dim (a transposed operand: not the kernel's), and a
/// small dot: the f32 chunks as without the kernel.
// CHECK-LABEL: func.func @not_the_kernels
// CHECK: stablehlo.dot_general {{.*}} -> tensor<64x48xf32>
// CHECK: stablehlo.dot_general {{.*}} -> tensor<8x8xf32>
func.func @not_the_kernels(%a: tensor<64x3000xi8>, %b: tensor<48x3000xi8>, %c: tensor<8x3000xi8>, %d: tensor<3000x8xi8>) -> (tensor<64x48xi32>, tensor<8x8xi32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [1] : (tensor<64x3000xi8>, tensor<48x3000xi8>) -> tensor<64x48xi32>
  %1 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<8x3000xi8>, tensor<3000x8xi8>) -> tensor<8x8xi32>
  return %0, %1 : tensor<64x48xi32>, tensor<8x8xi32>
}
