// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=32})' --split-input-file | FileCheck %s

/// ViT's projection and its bias and residual adds (AVX2: 6 x 16 register
/// tiles, k = 192 in one block): C's rows reach the epilogue through an
/// expand_shape. One thread loop; in each chunk B's columns are packed once,
/// and each register tile starts from zeros in registers (no zeroing pass),
/// runs over k, and goes through the bias and residual adds at once.
/// 197 = 32 x 6 + 5: each image's last 5 rows are one masked tile.
// CHECK-LABEL: func.func @bias_residual
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK: scf.forall (%{{.*}}) in (12)
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.fill
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (tensor<4x197x16xf32>)
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C192:.*]] step %{{.*}} iter_args(%{{.*}}) -> (tensor<4x197x16xf32>)
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK: vector.contract
// CHECK: %[[TILE:.*]] = vector.transfer_write %[[ACC]]
// CHECK: %[[C:.*]] = tensor.expand_shape %[[TILE]] {{\[\[}}0, 1], [2]] output_shape [1, 6, 16]
// CHECK: %[[CV:.*]] = vector.transfer_read %[[C]]{{.*}} vector<6x16xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[CV]], %{{.*}} : vector<6x16xf32>
// CHECK: arith.addf %[[SUM]], %{{.*}} : vector<6x16xf32>
// CHECK: vector.mask %{{.*}} { vector.contract
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.
// CHECK: return
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (0, 0, d2)>
func.func @bias_residual(%x: tensor<788x192xf32>, %w: tensor<192x192xf32>, %b: tensor<1x1x192xf32>,
                         %r: tensor<4x197x192xf32>) -> tensor<4x197x192xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<788x192xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<788x192xf32>) -> tensor<788x192xf32>
  %d = linalg.matmul ins(%x, %w : tensor<788x192xf32>, tensor<192x192xf32>) outs(%c : tensor<788x192xf32>) -> tensor<788x192xf32>
  %e = tensor.expand_shape %d [[0, 1], [2]] output_shape [4, 197, 192] : tensor<788x192xf32> into tensor<4x197x192xf32>
  %out = tensor.empty() : tensor<4x197x192xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %b, %r : tensor<4x197x192xf32>, tensor<1x1x192xf32>, tensor<4x197x192xf32>) outs(%out : tensor<4x197x192xf32>) {
  ^bb0(%in: f32, %bias: f32, %res: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    %1 = arith.addf %0, %res : f32
    linalg.yield %1 : f32
  } -> tensor<4x197x192xf32>
  return %s : tensor<4x197x192xf32>
}

// -----

/// C read by the epilogue and returned too: the matmul's chunks must write
/// all of C anyway, so the two keep their own thread loops.
// CHECK-LABEL: func.func @c_read_twice
// CHECK: scf.forall
// CHECK: vector.contract
// CHECK: scf.forall
// CHECK: arith.addf %{{.*}} : vector<8xf32>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @c_read_twice(%x: tensor<788x192xf32>, %w: tensor<192x192xf32>, %b: tensor<192xf32>)
    -> (tensor<788x192xf32>, tensor<788x192xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<788x192xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<788x192xf32>) -> tensor<788x192xf32>
  %d = linalg.matmul ins(%x, %w : tensor<788x192xf32>, tensor<192x192xf32>) outs(%c : tensor<788x192xf32>) -> tensor<788x192xf32>
  %out = tensor.empty() : tensor<788x192xf32>
  %s = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d, %b : tensor<788x192xf32>, tensor<192xf32>) outs(%out : tensor<788x192xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    linalg.yield %0 : f32
  } -> tensor<788x192xf32>
  return %s, %d : tensor<788x192xf32>, tensor<788x192xf32>
}

// -----

/// k = 768: each thread chunk is 16 columns, too narrow for four column
/// tiles to a block but one whole-k block all the same (whole_chunk_block):
/// the register tiles run all of k from zeros in registers and go through
/// the bias add at once (three 256-deep blocks before, the epilogue on the
/// chunk after its tiles).
// CHECK-LABEL: func.func @second_mlp_dot
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK: scf.forall (%{{.*}}) in (12)
// CHECK-NOT: scf.forall
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %c0 to %c768 step %c1 iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK: vector.contract
// CHECK: %[[TILE:.*]] = vector.transfer_write %[[ACC]]
// CHECK: tensor.expand_shape %[[TILE]]
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<6x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (0, 0, d2)>
func.func @second_mlp_dot(%x: tensor<788x768xf32>, %w: tensor<768x192xf32>, %b: tensor<1x1x192xf32>)
    -> tensor<4x197x192xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<788x192xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<788x192xf32>) -> tensor<788x192xf32>
  %d = linalg.matmul ins(%x, %w : tensor<788x768xf32>, tensor<768x192xf32>) outs(%c : tensor<788x192xf32>) -> tensor<788x192xf32>
  %e = tensor.expand_shape %d [[0, 1], [2]] output_shape [4, 197, 192] : tensor<788x192xf32> into tensor<4x197x192xf32>
  %out = tensor.empty() : tensor<4x197x192xf32>
  %s = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %b : tensor<4x197x192xf32>, tensor<1x1x192xf32>) outs(%out : tensor<4x197x192xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    linalg.yield %0 : f32
  } -> tensor<4x197x192xf32>
  return %s : tensor<4x197x192xf32>
}

// -----

/// GPT-2's projection: the weight is [n, k] (PyTorch's Linear), B its
/// transpose. The transpose of the chunk's columns is made in 16 x 16 blocks
/// into the chunk's packed B, and the register tiles read it and finish with
/// the bias and residual adds, in the same thread loop.
// CHECK-LABEL: func.func @transposed_weight
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK: scf.forall
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.transpose
// CHECK: vector.transfer_read {{.*}} vector<16x16xf32>
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK: vector.contract
// CHECK: %[[TILE:.*]] = vector.transfer_write %[[ACC]]
// CHECK: %[[C:.*]] = tensor.expand_shape %[[TILE]]
// CHECK: %[[CV:.*]] = vector.transfer_read %[[C]]{{.*}} vector<6x16xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[CV]], %{{.*}} : vector<6x16xf32>
// CHECK: arith.addf %[[SUM]], %{{.*}} : vector<6x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
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

/// GPT-2's second MLP dot, its weight [n, k], at 96 rows: k = 1024 is four
/// blocks, but the chunk's whole-k panels are made by the transpose
/// (contraction_plan._whole_k_transposed_panels_avx2), so the register tiles
/// run all of k from zeros in registers and go through the bias and
/// residual adds at once, in the same thread loop: no second loop over C.
// CHECK-LABEL: func.func @transposed_weight_long_k
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK: scf.forall
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.transpose
// CHECK: vector.transfer_read {{.*}} vector<16x16xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c1 iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
// CHECK: vector.contract
// CHECK: %[[SUM:[0-9]+]] = arith.addf %{{.*}}, %{{.*}} : vector<6x16xf32>
// CHECK: arith.addf %[[SUM]], %{{.*}} : vector<6x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.generic
// CHECK: return
#idl = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rowl = affine_map<(d0, d1, d2) -> (0, 0, d2)>
func.func @transposed_weight_long_k(%x: tensor<96x1024xf32>, %w: tensor<256x1024xf32>, %b: tensor<1x1x256xf32>,
                                    %r: tensor<2x48x256xf32>) -> tensor<2x48x256xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_empty = tensor.empty() : tensor<1024x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x1024xf32>) outs(%wt_empty : tensor<1024x256xf32>) permutation = [1, 0]
  %empty = tensor.empty() : tensor<96x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<96x256xf32>) -> tensor<96x256xf32>
  %d = linalg.matmul ins(%x, %wt : tensor<96x1024xf32>, tensor<1024x256xf32>) outs(%c : tensor<96x256xf32>) -> tensor<96x256xf32>
  %e = tensor.expand_shape %d [[0, 1], [2]] output_shape [2, 48, 256] : tensor<96x256xf32> into tensor<2x48x256xf32>
  %out = tensor.empty() : tensor<2x48x256xf32>
  %s = linalg.generic {indexing_maps = [#idl, #rowl, #idl, #idl], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %b, %r : tensor<2x48x256xf32>, tensor<1x1x256xf32>, tensor<2x48x256xf32>) outs(%out : tensor<2x48x256xf32>) {
  ^bb0(%in: f32, %bias: f32, %res: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    %1 = arith.addf %0, %res : f32
    linalg.yield %1 : f32
  } -> tensor<2x48x256xf32>
  return %s : tensor<2x48x256xf32>
}

// -----

/// GPT-2's LM head, no epilogue: 256 x 256 x 8000 with B the tied embedding
/// transposed. k is one block, so each column tile's panel of B is made in
/// 8 x 8 register transposes (AVX2: a 16 x 16 block's 32 ymm values spill)
/// and each register tile starts from zeros in registers: no zero fill of
/// C's chunk (800 columns) before the tiles.
// CHECK-LABEL: func.func @lm_head
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK: scf.forall (%{{.*}}) in (10)
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.transpose
// CHECK-NOT: vector<16x16xf32>
// CHECK: vector.transfer_read {{.*}} vector<8x8xf32>
// CHECK-NOT: vector<16x16xf32>
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<6x16xf32>)
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

/// The same dot at 256 rows (GPT-2's): the same whole-k panels, no
/// transpose in a kernel of its own (as from 128 rows before).
// CHECK-LABEL: func.func @transposed_weight_long_k_many_rows
// CHECK-NOT: call @xla_scheduled
// CHECK: scf.forall
// CHECK-NOT: scf.forall
// CHECK: vector.transfer_read {{.*}} vector<16x16xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c1 iter_args
// CHECK: vector.contract
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<6x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: return
#idm = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rowm = affine_map<(d0, d1, d2) -> (0, 0, d2)>
func.func @transposed_weight_long_k_many_rows(%x: tensor<256x1024xf32>, %w: tensor<256x1024xf32>, %b: tensor<1x1x256xf32>,
                                              %r: tensor<2x128x256xf32>) -> tensor<2x128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %wt_empty = tensor.empty() : tensor<1024x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x1024xf32>) outs(%wt_empty : tensor<1024x256xf32>) permutation = [1, 0]
  %empty = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x256xf32>) -> tensor<256x256xf32>
  %d = linalg.matmul ins(%x, %wt : tensor<256x1024xf32>, tensor<1024x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  %e = tensor.expand_shape %d [[0, 1], [2]] output_shape [2, 128, 256] : tensor<256x256xf32> into tensor<2x128x256xf32>
  %out = tensor.empty() : tensor<2x128x256xf32>
  %s = linalg.generic {indexing_maps = [#idm, #rowm, #idm, #idm], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %b, %r : tensor<2x128x256xf32>, tensor<1x1x256xf32>, tensor<2x128x256xf32>) outs(%out : tensor<2x128x256xf32>) {
  ^bb0(%in: f32, %bias: f32, %res: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    %1 = arith.addf %0, %res : f32
    linalg.yield %1 : f32
  } -> tensor<2x128x256xf32>
  return %s : tensor<2x128x256xf32>
}
