// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=1 vector-bytes=64 l1d-bytes=32768})' | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=1 vector-bytes=64 l1d-bytes=49152})' | FileCheck %s --check-prefix=WIDE
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=1 vector-bytes=64})' | FileCheck %s --check-prefix=WIDE

/// AVX-512, 128 rows (16 row tiles of 8): with an L1 of 32 KiB (Zen 4), which
/// cannot hold a 256 x 32 panel of B (32 KiB) beside a row tile's A, all of
/// k = 768 in one packed block (768 x 128, 384 KiB, read from L2); with 48 KiB
/// (Emerald Rapids), or an L1 not known, the 256 x 32 panels, kept in L1.
// CHECK-LABEL: func.func @transformer_ffn
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<768x128xf32>
// CHECK-NOT: memref<256x32xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (vector<8x32xf32>)
// WIDE-LABEL: func.func @transformer_ffn
// WIDE: memref.alloc() {alignment = 64 : i64} : memref<256x32xf32>
// WIDE-NOT: memref<768x128xf32>
func.func @transformer_ffn(%a: tensor<128x768xf32>, %b: tensor<768x3072xf32>) -> tensor<128x3072xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x3072xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x768xf32>, tensor<768x3072xf32>) outs(%c : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  return %r : tensor<128x3072xf32>
}
