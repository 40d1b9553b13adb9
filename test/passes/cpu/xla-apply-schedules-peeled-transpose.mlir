// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=64})' | FileCheck %s

/// Attention's K to (h, b, d, i), 40 tokens (2 whole blocks and 8): the peeled
/// edge block's masked read is a read of rows in the input's own order (its
/// unit dim h kept between i and d), mask [8, 1, 16] over (i, h, d), and a
/// transpose in registers; never a transposing masked read that skips h
/// (convert-vector-to-scf took such a read's mask along d: half the block unread).
// CHECK-LABEL: func.func @heads_k_transposed
// CHECK: vector.transfer_read %{{.*}} {in_bounds = [true, true, true]} : tensor<2x40x3x16xf32>, vector<16x1x16xf32>
// CHECK: tensor.extract_slice %{{.*}} [1, 8, 1, 16] [1, 1, 1, 1] : tensor<2x40x3x16xf32> to tensor<1x8x1x16xf32>
// CHECK: %[[MASK:.*]] = vector.constant_mask [8, 1, 16] : vector<16x1x16xi1>
// CHECK-NOT: permutation_map
// CHECK: vector.transfer_read %{{.*}}, %{{.*}}, %[[MASK]] {in_bounds = [true, true, true]} : tensor<1x8x1x16xf32>, vector<16x1x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write %{{.*}}, %{{.*}} {in_bounds = [true, true]} : vector<16x16xf32>, tensor<1x1x16x8xf32>
#in = affine_map<(d0, d1, d2, d3) -> (d1, d3, d0, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @heads_k_transposed(%x: tensor<2x40x3x16xf32>) -> tensor<3x2x16x40xf32> {
  %init = tensor.empty() : tensor<3x2x16x40xf32>
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x40x3x16xf32>) outs(%init : tensor<3x2x16x40xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<3x2x16x40xf32>
  return %0 : tensor<3x2x16x40xf32>
}
