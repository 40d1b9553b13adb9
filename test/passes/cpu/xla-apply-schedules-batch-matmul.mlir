// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=32})' --split-input-file 2>/dev/null | FileCheck %s

/// Attention's Q.K^T with k = 64 (the head size) and m = 512 rows, which
/// AVX2's 6-row register tiles do not divide (512 = 85 x 6 + 2): every
/// register tile, the whole ones and the peeled 2-row one alike, starts from
/// zeros in registers; there is no zero fill of C before the tiles. B's rows
/// (K^T's, 512 floats) are 2 KiB apart, a 64-deep panel in place falls into 2
/// of L1's 64 sets: B is packed a 64 x 16 panel at a time, column panels
/// outside the row tiles (@xla_batch_matmul_short_k_packed). k runs 0 to 64
/// in order in each tile.
// CHECK-LABEL: func.func @qk_rows_peeled
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK-NOT: vector.transfer_write %[[ZEROS]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C512:.*]] step %[[C16:.*]] iter_args
// CHECK: %[[PANEL:.*]] = memref.alloc() {{.*}} : memref<1x64x16xf32>
// CHECK: %[[PACKED:.*]] = bufferization.to_tensor %[[PANEL]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C510:.*]] step %[[C6:.*]] iter_args
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C64:.*]] step %{{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK: vector.transfer_read %[[PACKED]]
// CHECK: vector.contract
// CHECK: vector.transfer_write %[[ACC]], %{{.*}} {in_bounds = [true, true]} : vector<6x16xf32>, tensor<6x16xf32>
// CHECK: %[[EDGE_ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C64]] step %{{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK: vector.mask %{{.*}} { vector.contract
// CHECK: vector.transfer_write %[[EDGE_ACC]], %{{.*}}, %{{.*}} {{.*}} : vector<6x16xf32>, tensor<2x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.
// CHECK: return
func.func @qk_rows_peeled(%q: tensor<8x512x64xf32>, %kt: tensor<8x64x512xf32>) -> tensor<8x512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x512x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x512x64xf32>, tensor<8x64x512xf32>)
                           outs(%c : tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
  return %s : tensor<8x512x512xf32>
}

// -----

/// ViT's 197 columns are not whole 16-column tiles: the edge columns keep
/// @xla_batch_matmul_peeled, which zeroes C in a pass of its own first: its
/// whole 6 x 16 tiles unmasked, the 5 edge columns under a mask
/// (@xla_peel_fill_tiles).
// CHECK-LABEL: func.func @qk_columns_peeled
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK: scf.forall (%{{.*}}) in (12)
// CHECK: scf.for %{{.*}} = %c0 to %c192 step %c16
// CHECK-NEXT: vector.transfer_write %[[ZEROS]], %{{.*}} {in_bounds = [true, true]} : vector<6x16xf32>, tensor<1x197x197xf32>
// CHECK: %[[EDGE:.*]] = vector.constant_mask [6, 5] : vector<6x16xi1>
// CHECK-NEXT: vector.transfer_write %[[ZEROS]], %{{.*}}, %[[EDGE]] {in_bounds = [true, true]} : vector<6x16xf32>, tensor<1x6x5xf32>
// CHECK: return
func.func @qk_columns_peeled(%q: tensor<12x197x64xf32>, %kt: tensor<12x64x197xf32>) -> tensor<12x197x197xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<12x197x197xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<12x197x197xf32>) -> tensor<12x197x197xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<12x197x64xf32>, tensor<12x64x197xf32>)
                           outs(%c : tensor<12x197x197xf32>) -> tensor<12x197x197xf32>
  return %s : tensor<12x197x197xf32>
}

// -----

/// Attention's P.V: k = 512 (the sequence) is past one 256-deep block, but a
/// batch's 512 x 64 of B is 128 KiB, in L2: the register tiles run all of k
/// from zeros in registers instead of k blocks over C zeroed first and read
/// back once per block. B's rows are 256 B apart: a 512-deep, 16-column panel
/// read in place falls into 16 of L1's 64 sets, so each batch's B is packed a
/// panel at a time (@xla_batch_matmul_short_k_packed): column panels outside,
/// each copied into a contiguous 512 x 16 buffer that every row tile of the
/// batch, the peeled 2-row one too, reads. k runs 0 to 512 in order in each tile.
// CHECK-LABEL: func.func @pv_k_in_two_blocks
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK-NOT: vector.transfer_write %[[ZEROS]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C64:.*]] step %[[C16:.*]] iter_args
// CHECK: %[[PANEL:.*]] = memref.alloc() {{.*}} : memref<1x512x16xf32>
// CHECK: scf.for
// CHECK: vector.transfer_write %{{.*}}, %{{.*}} : vector<16xf32>, memref<1x1x16xf32
// CHECK: %[[PACKED:.*]] = bufferization.to_tensor %[[PANEL]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C510:.*]] step %[[C6:.*]] iter_args
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C512:.*]] step %{{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK: vector.transfer_read %[[PACKED]]
// CHECK: vector.contract
// CHECK: vector.transfer_write %[[ACC]], %{{.*}} {in_bounds = [true, true]} : vector<6x16xf32>, tensor<6x16xf32>
// CHECK: %[[EDGE_ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C512]] step %{{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK: vector.transfer_read %[[PACKED]]
// CHECK: vector.mask %{{.*}} { vector.contract
// CHECK: vector.transfer_write %[[EDGE_ACC]], %{{.*}}, %{{.*}} {{.*}} : vector<6x16xf32>, tensor<2x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.
// CHECK: return
func.func @pv_k_in_two_blocks(%p: tensor<8x512x512xf32>, %v: tensor<8x512x64xf32>) -> tensor<8x512x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x512x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x512x64xf32>) -> tensor<8x512x64xf32>
  %s = linalg.batch_matmul ins(%p, %v : tensor<8x512x512xf32>, tensor<8x512x64xf32>)
                           outs(%c : tensor<8x512x64xf32>) -> tensor<8x512x64xf32>
  return %s : tensor<8x512x64xf32>
}

// -----

/// k = 512 with a batch's B of 512 x 256 (512 KiB, past L2) keeps its
/// 256-deep k blocks and the zero fill of C before them (@xla_batch_matmul).
// CHECK-LABEL: func.func @k_blocked_wide_b
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00>
// CHECK: scf.forall
// CHECK: vector.transfer_write %[[ZEROS]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C256:c256.*]] iter_args
// CHECK: return
func.func @k_blocked_wide_b(%a: tensor<4x96x512xf32>, %b: tensor<4x512x256xf32>) -> tensor<4x96x256xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x96x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x96x256xf32>) -> tensor<4x96x256xf32>
  %s = linalg.batch_matmul ins(%a, %b : tensor<4x96x512xf32>, tensor<4x512x256xf32>)
                           outs(%c : tensor<4x96x256xf32>) -> tensor<4x96x256xf32>
  return %s : tensor<4x96x256xf32>
}
