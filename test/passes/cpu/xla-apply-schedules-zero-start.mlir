// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=32})' | FileCheck %s

/// AVX2 (6 x 16 tiles), all of k in one packed block of B (1024 x 64, in
/// chunks of 128 columns): each register tile's accumulators start from
/// zeros in registers (@xla_matmul_block_packed_zero_start), no fill pass
/// zeroes C first and no tile reads C back; the peeled 4-row edge as well.
// CHECK-LABEL: func.func @square
// CHECK-NOT: linalg.fill
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1024x64xf32>
// CHECK: bufferization.to_tensor
// CHECK: scf.for %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NEXT: scf.for %{{.*}} iter_args
// CHECK-NOT: vector.transfer_read {{.*}} vector<6x16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK: vector.contract {{.*}} into vector<6x16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK-NOT: linalg.fill
func.func @square(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}
