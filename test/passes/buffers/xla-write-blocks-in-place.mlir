// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-write-blocks-in-place)' --split-input-file | FileCheck %s

#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

/// A stacked operand's kernel (its init an empty, its elements unread), its
/// result inserted as a contiguous block of the result: the block of the
/// destination becomes the init, the generic moved down to the insert.
// CHECK-LABEL: func.func @stacked
// CHECK: %[[D:.*]] = tensor.empty() : tensor<2x4x3xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[D]][0, 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK: %[[G0:.*]] = linalg.generic {{.*}} outs(%[[S0]] : tensor<1x4x3xf32>)
// CHECK-SAME: xla.fusion_group = 1
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[G0]] into %[[D]][0, 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[I0]][1, 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK: %[[G1:.*]] = linalg.generic {{.*}} outs(%[[S1]] : tensor<1x4x3xf32>)
// CHECK: tensor.insert_slice %[[G1]] into %[[I0]][1, 0, 0] [1, 4, 3] [1, 1, 1]
func.func @stacked(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x4x3xf32> {
  %e = tensor.empty() : tensor<1x4x3xf32>
  %m = linalg.generic {indexing_maps = [#m3, #m3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %b : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<1x4x3xf32>) attrs = {xla.fusion_group = 1 : i64} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<1x4x3xf32>
  %s = linalg.generic {indexing_maps = [#m3, #m3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %b : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<1x4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.addf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<1x4x3xf32>
  %d = tensor.empty() : tensor<2x4x3xf32>
  %0 = tensor.insert_slice %m into %d[0, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<1x4x3xf32> into tensor<2x4x3xf32>
  %1 = tensor.insert_slice %s into %0[1, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<1x4x3xf32> into tensor<2x4x3xf32>
  return %1 : tensor<2x4x3xf32>
}

// -----

#m2 = affine_map<(d0, d1) -> (d0, d1)>

/// Rows of a matrix (an outer-axis concatenate of 2-D operands): contiguous.
// CHECK-LABEL: func.func @rows
// CHECK: %[[S:.*]] = tensor.extract_slice %arg1[2, 0] [4, 3] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[S]] : tensor<4x3xf32>)
func.func @rows(%a: tensor<4x3xf32>, %d: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %n = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %p = arith.negf %x : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  %0 = tensor.insert_slice %n into %d[2, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

#m2 = affine_map<(d0, d1) -> (d0, d1)>

/// Columns (an innermost-axis concatenate's operand: a strided block), a
/// second use of the result, and an init whose elements the body reads: left.
// CHECK-LABEL: func.func @left
// CHECK-NOT: tensor.extract_slice
// CHECK: outs(%{{.*}} : tensor<4x3xf32>)
// CHECK-NOT: tensor.extract_slice
func.func @left(%a: tensor<4x3xf32>, %d: tensor<4x8xf32>, %d2: tensor<8x3xf32>)
    -> (tensor<4x8xf32>, tensor<8x3xf32>, tensor<4x3xf32>, tensor<8x3xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  %n = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %p = arith.negf %x : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  %0 = tensor.insert_slice %n into %d[0, 2] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x8xf32>
  %k = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %p = arith.negf %x : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  %1 = tensor.insert_slice %k into %d2[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<8x3xf32>
  %r = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %p = arith.addf %x, %o : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  %2 = tensor.insert_slice %r into %d2[4, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<8x3xf32>
  return %0, %1, %k, %2 : tensor<4x8xf32>, tensor<8x3xf32>, tensor<4x3xf32>, tensor<8x3xf32>
}
