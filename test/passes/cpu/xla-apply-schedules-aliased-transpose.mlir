// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=64})' | FileCheck %s

/// The input's rows 4 KiB apart, the output's 1 KiB: the blocks sweep the
/// input's rows (xla_transpose_rows_2d): the outer block loop walks the
/// input's rows, the inner one its columns (a block's 16 rows share one L1
/// set; sweeping down the columns evicted the lines prefetched for the next).
// CHECK-LABEL: func.func @rows_4k_apart
// CHECK: scf.forall
// CHECK: scf.for %[[ROW:[a-z0-9]+]] = %c0 to %c256 step %c16
// CHECK: scf.for %[[COL:[a-z0-9]+]] = %c0 to %c256 step %c16
// CHECK: vector.transfer_read %arg0[%[[ROW]], %{{.*}}], %{{.*}} {in_bounds = [true, true]} : tensor<256x1024xf32>, vector<16x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write %{{.*}}[%[[COL]], %[[ROW]]] {in_bounds = [true, true]} : vector<16x16xf32>
func.func @rows_4k_apart(%x: tensor<256x1024xf32>) -> tensor<1024x256xf32> {
  %init = tensor.empty() : tensor<1024x256xf32>
  %0 = linalg.transpose ins(%x : tensor<256x1024xf32>) outs(%init : tensor<1024x256xf32>) permutation = [1, 0]
  return %0 : tensor<1024x256xf32>
}

/// The output's rows 2 KiB apart as well: the blocks sweep down the input's
/// columns as before (xla_transpose_blocks_2d; the other order ran slower).
// CHECK-LABEL: func.func @both_aliased
// CHECK: scf.forall
// CHECK: scf.for %[[COL:[a-z0-9]+]] = %c0 to %c128 step %c16
// CHECK: scf.for %[[ROW:[a-z0-9]+]] = %c0 to %c512 step %c16
// CHECK: vector.transfer_read %arg0[%[[ROW]], %{{.*}}], %{{.*}} {in_bounds = [true, true]} : tensor<512x1024xf32>, vector<16x16xf32>
// CHECK: vector.transfer_write %{{.*}}[%[[COL]], %[[ROW]]] {in_bounds = [true, true]} : vector<16x16xf32>
func.func @both_aliased(%x: tensor<512x1024xf32>) -> tensor<1024x512xf32> {
  %init = tensor.empty() : tensor<1024x512xf32>
  %0 = linalg.transpose ins(%x : tensor<512x1024xf32>) outs(%init : tensor<1024x512xf32>) permutation = [1, 0]
  return %0 : tensor<1024x512xf32>
}
