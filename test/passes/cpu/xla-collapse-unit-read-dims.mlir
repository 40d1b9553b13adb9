// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-collapse-unit-read-dims)' --split-input-file | FileCheck %s

/// A column gather's indices (256x1, read at [%j, 0]): read without the unit
/// dim, so the innermost loop's index is the read's last (a vector load).
// CHECK-LABEL: func.func @column_gather
// CHECK-SAME: (%[[T:.*]]: tensor<8x1024xf16>, %[[I:.*]]: tensor<256x1xi32>)
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[I]] {{\[\[}}0, 1]] : tensor<256x1xi32> into tensor<256xi32>
// CHECK: linalg.generic
// CHECK: %[[K:.*]] = tensor.extract %[[F]][%{{.*}}] : tensor<256xi32>
// CHECK-NOT: tensor.extract %[[I]]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @column_gather(%t: tensor<8x1024xf16>, %i: tensor<256x1xi32>) -> tensor<8x256xf16> {
  %c0 = arith.constant 0 : index
  %c1023 = arith.constant 1023 : index
  %e = tensor.empty() : tensor<8x256xf16>
  %r = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<8x256xf16>) {
  ^bb0(%out: f16):
    %row = linalg.index 0 : index
    %col = linalg.index 1 : index
    %k = tensor.extract %i[%col, %c0] : tensor<256x1xi32>
    %ki = arith.index_cast %k : i32 to index
    %lo = arith.maxsi %ki, %c0 : index
    %at = arith.minsi %lo, %c1023 : index
    %v = tensor.extract %t[%row, %at] : tensor<8x1024xf16>
    linalg.yield %v : f16
  } -> tensor<8x256xf16>
  return %r : tensor<8x256xf16>
}

// -----

/// A unit dim read at a computed index, and one that is not trailing, stay.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tensor.collapse_shape
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x1xf32>
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<1x4xf32>
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @kept(%a: tensor<4x1xf32>, %b: tensor<1x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %jc = arith.minsi %j, %c0 : index
    %x = tensor.extract %a[%i, %jc] : tensor<4x1xf32>
    %y = tensor.extract %b[%c0, %j] : tensor<1x4xf32>
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
