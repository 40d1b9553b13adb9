// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-pack-matmul-panels{threads=2 vector-bytes=64})' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-pack-matmul-panels{threads=2 vector-bytes=32})' --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-pack-matmul-panels{threads=2 vector-bytes=64},xla-apply-schedules{threads=2 vector-bytes=64})' --split-input-file | FileCheck %s --check-prefix=SCHEDULED

/// AVX-512, 1024^3: B packed once into k-block-major 256 x 32 panels, the
/// matmul a generic over them writing the same C, one chunk of rows per thread.
// CHECK-LABEL: func.func @square
// CHECK: %[[B4:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2, 3]] output_shape [4, 256, 32, 32]
// CHECK: %[[BP:.*]] = linalg.transpose ins(%[[B4]] : tensor<4x256x32x32xf32>) outs(%{{.*}} : tensor<4x32x256x32xf32>) permutation = [0, 2, 1, 3]
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %[[BP]] : tensor<1024x1024xf32>, tensor<4x32x256x32xf32>)
// CHECK-SAME: xla_panel_matmul = array<i64: 512, 32, 256, 8, 32>
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.matmul
// AVX2 has its own whole-block packing: the matmul stays.
// AVX2-LABEL: func.func @square
// AVX2: linalg.matmul
// AVX2-NOT: linalg.transpose
// The panels' schedule applies: register tiles of 8 x 32 over one panel, k
// step by step; the packing is vector copies split among the threads.
// SCHEDULED-LABEL: func.func @square
// SCHEDULED-NOT: remark
// SCHEDULED: scf.forall
// SCHEDULED: vector.transfer_write {{.*}} vector<16xf32>, tensor<1x1x1x16xf32>
// SCHEDULED: scf.forall
// SCHEDULED: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// SCHEDULED-NOT: linalg.generic
func.func @square(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>)
         outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

// -----

/// Too few rows for the threads to share a packed B (32 a chunk): left as it was.
// CHECK-LABEL: func.func @few_rows
// CHECK: linalg.matmul
// CHECK-NOT: linalg.transpose
func.func @few_rows(%a: tensor<64x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x1024xf32>, tensor<1024x1024xf32>)
         outs(%c : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

/// f64: not the f32 register tiles' plan.
// CHECK-LABEL: func.func @double
// CHECK: linalg.matmul
// CHECK-NOT: linalg.transpose
func.func @double(%a: tensor<1024x1024xf64>, %b: tensor<1024x1024xf64>) -> tensor<1024x1024xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1024x1024xf64>
  %c = linalg.fill ins(%zero : f64) outs(%e : tensor<1024x1024xf64>) -> tensor<1024x1024xf64>
  %r = linalg.matmul ins(%a, %b : tensor<1024x1024xf64>, tensor<1024x1024xf64>)
         outs(%c : tensor<1024x1024xf64>) -> tensor<1024x1024xf64>
  return %r : tensor<1024x1024xf64>
}
