// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=64})' --split-input-file 2>/dev/null | FileCheck %s

// AVX-512's (x86-64-v4: 32 registers, 8 x 32 register tiles) plans for B
// made by a transpose (GPT-2's [n, k] weights) and for a batch matmul whose
// k is past one block: the AVX2 cases are xla-apply-schedules-epilogue.mlir
// and xla-apply-schedules-batch-matmul.mlir.

/// GPT-2's LM head, 256 x 256 x 8000 with B the tied embedding transposed:
/// k is one block, so each column tile's 256 x 32 panel of B is made in
/// 16 x 16 register transposes and each register tile starts from zeros in
/// registers (@xla_matmul_fused_b_short_k): no zero fill of C's 800-column
/// chunks before the tiles.
// CHECK-LABEL: func.func @lm_head
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK: scf.forall (%{{.*}}) in (10)
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.transpose
// CHECK-NOT: vector.transfer_write %[[ZEROS]]
// CHECK: vector.transfer_read {{.*}} vector<16x16xf32>
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<8x32xf32>)
// CHECK: vector.contract
// CHECK: vector.transfer_write %[[ACC]]
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: return
func.func @lm_head(%x: tensor<256x256xf32>, %w: tensor<8000x256xf32>) -> tensor<256x8000xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_empty = tensor.empty() : tensor<256x8000xf32>
  %wt = linalg.transpose ins(%w : tensor<8000x256xf32>) outs(%wt_empty : tensor<256x8000xf32>) permutation = [1, 0]
  %empty = tensor.empty() : tensor<256x8000xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x8000xf32>) -> tensor<256x8000xf32>
  %d = linalg.matmul ins(%x, %wt : tensor<256x256xf32>, tensor<256x8000xf32>) outs(%c : tensor<256x8000xf32>) -> tensor<256x8000xf32>
  return %d : tensor<256x8000xf32>
}

// -----

/// GPT-2's attention projection, 256 x 256 x 256 with its weight [n, k]:
/// whole 8-row tiles and k in one block took the plain short-k plan, with B's
/// transpose and the bias and residual adds kernels of their own. Now one
/// thread loop over 32-column chunks: each chunk's panel made by 16 x 16
/// register transposes, tiles from zeros in registers, the adds on each tile.
// CHECK-LABEL: func.func @transposed_weight
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.transpose
// CHECK: vector.transfer_read {{.*}} vector<16x16xf32>
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<8x32xf32>)
// CHECK: vector.contract
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<8x32xf32>
// CHECK: arith.addf %[[SUM]], %{{.*}} : vector<8x32xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.generic
// CHECK: return
#idt = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rowt = affine_map<(d0, d1, d2) -> (0, 0, d2)>
func.func @transposed_weight(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>, %b: tensor<1x1x256xf32>,
                             %r: tensor<2x128x256xf32>) -> tensor<2x128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_empty = tensor.empty() : tensor<256x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x256xf32>) outs(%wt_empty : tensor<256x256xf32>) permutation = [1, 0]
  %empty = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x256xf32>) -> tensor<256x256xf32>
  %d = linalg.matmul ins(%x, %wt : tensor<256x256xf32>, tensor<256x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  %e = tensor.expand_shape %d [[0, 1], [2]] output_shape [2, 128, 256] : tensor<256x256xf32> into tensor<2x128x256xf32>
  %out = tensor.empty() : tensor<2x128x256xf32>
  %s = linalg.generic {indexing_maps = [#idt, #rowt, #idt, #idt], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %b, %r : tensor<2x128x256xf32>, tensor<1x1x256xf32>, tensor<2x128x256xf32>) outs(%out : tensor<2x128x256xf32>) {
  ^bb0(%in: f32, %bias: f32, %res: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    %1 = arith.addf %0, %res : f32
    linalg.yield %1 : f32
  } -> tensor<2x128x256xf32>
  return %s : tensor<2x128x256xf32>
}

// -----

/// GPT-2's second MLP dot, k = 1024 (four blocks): chunks of 32 columns
/// (with 8-row chunks each chunk transposed all 1 MB of B again), the
/// transpose fused into each panel, then the bias and residual adds on the
/// chunk, C's chunk still in cache: one thread loop.
// CHECK-LABEL: func.func @transposed_weight_long_k
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.transpose
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C256:c256.*]] iter_args
// CHECK: vector.transfer_read {{.*}} vector<16x16xf32>
// CHECK: vector.contract
// CHECK: %[[SUM:[0-9]+]] = arith.addf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK-NEXT: arith.addf %[[SUM]], %{{.*}} : vector<32xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.generic
// CHECK: return
#idl = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rowl = affine_map<(d0, d1, d2) -> (0, 0, d2)>
func.func @transposed_weight_long_k(%x: tensor<256x1024xf32>, %w: tensor<256x1024xf32>, %b: tensor<1x1x256xf32>,
                                    %r: tensor<2x128x256xf32>) -> tensor<2x128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_empty = tensor.empty() : tensor<1024x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x1024xf32>) outs(%wt_empty : tensor<1024x256xf32>) permutation = [1, 0]
  %empty = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x256xf32>) -> tensor<256x256xf32>
  %d = linalg.matmul ins(%x, %wt : tensor<256x1024xf32>, tensor<1024x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  %e = tensor.expand_shape %d [[0, 1], [2]] output_shape [2, 128, 256] : tensor<256x256xf32> into tensor<2x128x256xf32>
  %out = tensor.empty() : tensor<2x128x256xf32>
  %s = linalg.generic {indexing_maps = [#idl, #rowl, #idl, #idl], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %b, %r : tensor<2x128x256xf32>, tensor<1x1x256xf32>, tensor<2x128x256xf32>) outs(%out : tensor<2x128x256xf32>) {
  ^bb0(%in: f32, %bias: f32, %res: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    %1 = arith.addf %0, %res : f32
    linalg.yield %1 : f32
  } -> tensor<2x128x256xf32>
  return %s : tensor<2x128x256xf32>
}

// -----

/// Attention's P.V (8 x 512 x 512 x 64): k = 512 is two blocks, but a
/// batch's 512 x 64 of B (128 KiB) is in L2: each 8 x 32 register tile runs
/// all of k from zeros in registers, one kernel, no zero fill of C.
// CHECK-LABEL: func.func @pv_k_in_two_blocks
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK-NOT: vector.transfer_write %[[ZEROS]]
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C512:.*]] step %{{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<8x32xf32>)
// CHECK: vector.contract
// CHECK: vector.transfer_write %[[ACC]], %{{.*}} {in_bounds = [true, true]} : vector<8x32xf32>, tensor<8x32xf32>
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
