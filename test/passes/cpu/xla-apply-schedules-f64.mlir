// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=64})' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=32})' --split-input-file | FileCheck %s --check-prefix=AVX2

/// An f64 matmul at AVX-512 whose B is beyond L2 (512 x 2048 x 512, B 8 MiB):
/// 8 x 16 register tiles (two 8-lane vectors, 16 accumulators), B packed
/// into 256 x 16 panels, and two 128-row chunks a thread rather than four
/// of 64 rows: each chunk packs all of B again. k in order from 0, one k
/// step per contraction, in 256-deep blocks.
// CHECK-LABEL: func.func @f64_deep
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<8x16xf64>
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs
// CHECK: vector.transfer_write %[[ZEROS]], %{{.*}} : vector<8x16xf64>, tensor<128x512xf64>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<256x16xf64>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8x16xf64>)
// CHECK: vector.contract {{.*}} : vector<8x1xf64>, vector<1x16xf64> into vector<8x16xf64>
// CHECK: scf.forall.in_parallel
/// AVX2 keeps its block-packed plan: 6 x 8 tiles, chunks of 64 columns.
// AVX2-LABEL: func.func @f64_deep
// AVX2: arith.constant dense<0.000000e+00> : vector<6x8xf64>
// AVX2: scf.forall (%{{.*}}) in (8) shared_outs
// AVX2: memref.alloc() {alignment = 64 : i64} : memref<256x64xf64>
func.func @f64_deep(%a: tensor<512x2048xf64>, %b: tensor<2048x512xf64>) -> tensor<512x512xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<512x512xf64>
  %c = linalg.fill ins(%zero : f64) outs(%empty : tensor<512x512xf64>) -> tensor<512x512xf64>
  %r = linalg.matmul ins(%a, %b : tensor<512x2048xf64>, tensor<2048x512xf64>)
                     outs(%c : tensor<512x512xf64>) -> tensor<512x512xf64>
  return %r : tensor<512x512xf64>
}

// -----

/// 512^3 (B 2 MiB, k within one whole-k block): the row chunks would be too
/// short for the whole-k block, so the chunks are of all 512 rows and 64
/// columns, each packing its 512 x 64 block of B once
/// (contraction_plan: whole_k_blocks.all_rows_column_chunks).
// CHECK-LABEL: func.func @f64_512
// CHECK: arith.constant dense<0.000000e+00> : vector<8x16xf64>
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<512x64xf64>
// CHECK: scf.forall.in_parallel
// AVX2-LABEL: func.func @f64_512
// AVX2: arith.constant dense<0.000000e+00> : vector<6x8xf64>
// AVX2: scf.forall (%{{.*}}) in (8) shared_outs
// AVX2: memref.alloc() {alignment = 64 : i64} : memref<256x64xf64>
func.func @f64_512(%a: tensor<512x512xf64>, %b: tensor<512x512xf64>) -> tensor<512x512xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<512x512xf64>
  %c = linalg.fill ins(%zero : f64) outs(%empty : tensor<512x512xf64>) -> tensor<512x512xf64>
  %r = linalg.matmul ins(%a, %b : tensor<512x512xf64>, tensor<512x512xf64>)
                     outs(%c : tensor<512x512xf64>) -> tensor<512x512xf64>
  return %r : tensor<512x512xf64>
}

// -----

/// The same product in f32: four chunks of all rows and 128 columns (64-row
/// chunks, each packing B's 1 MiB again, before).
// CHECK-LABEL: func.func @f32_512
// CHECK: arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<512x128xf32>
func.func @f32_512(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<512x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>)
                     outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

// -----

/// An f64 B that stays in L2 (256 x 128: 256 KiB) keeps the usual chunks.
// CHECK-LABEL: func.func @f64_small_b
// CHECK: arith.constant dense<0.000000e+00> : vector<8x16xf64>
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs
func.func @f64_small_b(%a: tensor<512x256xf64>, %b: tensor<256x128xf64>) -> tensor<512x128xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<512x128xf64>
  %c = linalg.fill ins(%zero : f64) outs(%empty : tensor<512x128xf64>) -> tensor<512x128xf64>
  %r = linalg.matmul ins(%a, %b : tensor<512x256xf64>, tensor<256x128xf64>)
                     outs(%c : tensor<512x128xf64>) -> tensor<512x128xf64>
  return %r : tensor<512x128xf64>
}
