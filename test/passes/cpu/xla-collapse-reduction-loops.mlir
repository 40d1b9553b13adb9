// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-collapse-reduction-loops)' --split-input-file | FileCheck %s

/// A group norm's partial sum, (n, g, c | h, w) as linalg folded it back: the
/// loops every operand walks together merge, (n, g*c | h*w), a column reduction.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @partial_sum
// CHECK: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3, 4]] : tensor<2x32x32x32x4xf32> into tensor<2x1024x128xf32>
// CHECK: %[[INIT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<2x32x4xf32> into tensor<2x128xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x1024x128xf32>) outs(%[[INIT]] : tensor<2x128xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0], [1, 2]] output_shape [2, 32, 4] : tensor<2x128xf32> into tensor<2x32x4xf32>
#in = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4, d1, d2)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
func.func @partial_sum(%x: tensor<2x32x32x32x4xf32>, %init: tensor<2x32x4xf32>) -> tensor<2x32x4xf32> {
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<2x32x32x32x4xf32>) outs(%init : tensor<2x32x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x32x4xf32>
  return %0 : tensor<2x32x4xf32>
}

// -----

/// Left as they are: loops an operand walks apart (a transposed read), a body
/// that reads linalg.index, and an elementwise op (the schedules take any rank).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
#swapped = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#first = affine_map<(d0, d1, d2) -> (d0)>
func.func @kept(%t: tensor<8x4x16xf32>, %init: tensor<4xf32>, %y: tensor<4x8x16xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x8x16xf32>) {
  %0 = linalg.generic {indexing_maps = [#swapped, #first], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%t : tensor<8x4x16xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#id3, #first], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%y : tensor<4x8x16xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 2 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %m = arith.mulf %a, %f : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<4x8x16xf32>) outs(%y : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x8x16xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4x8x16xf32>
}

// -----

/// A column sum whose kept dims end in a short one (complex pairs: 1024 x 2):
/// as it is, the schedule would read along the rows (16 rows apart per lane),
/// so the kept dims merge into 2048 columns.
// CHECK-LABEL: func.func @short_columns
// CHECK: %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<512x1024x2xf32> into tensor<512x2048xf32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[F]] : tensor<512x2048xf32>)
// CHECK: tensor.expand_shape %[[S]] {{\[}}[0, 1]] output_shape [1024, 2] : tensor<2048xf32> into tensor<1024x2xf32>
#cols_in = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
#cols_out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @short_columns(%x: tensor<512x1024x2xf32>, %init: tensor<1024x2xf32>) -> tensor<1024x2xf32> {
  %0 = linalg.generic {indexing_maps = [#cols_in, #cols_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<512x1024x2xf32>) outs(%init : tensor<1024x2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1024x2xf32>
  return %0 : tensor<1024x2xf32>
}

// -----

/// An elementwise op whose innermost loop is shorter than a vector (a
/// broadcast of complex pairs): merged with its neighbour, 2048 lanes a row.
// CHECK-LABEL: func.func @short_rows
// CHECK: %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1024x2xf32> into tensor<2048xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[F]] : tensor<2048xf32>)
// CHECK: tensor.expand_shape {{.*}} : tensor<512x2048xf32> into tensor<512x1024x2xf32>
#row_in = affine_map<(d0, d1, d2) -> (d1, d2)>
#row_out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @short_rows(%v: tensor<1024x2xf32>, %init: tensor<512x1024x2xf32>) -> tensor<512x1024x2xf32> {
  %0 = linalg.generic {indexing_maps = [#row_in, #row_out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<1024x2xf32>) outs(%init : tensor<512x1024x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<512x1024x2xf32>
  return %0 : tensor<512x1024x2xf32>
}

// -----

/// An elementwise op whose innermost loop is a complex number's 2 parts and
/// whose body reads its indices (a gather of c128 rows as pairs, the reshape
/// of its merged table folded in by linalg's fusion): only the parts merge
/// with the loop before them; the linearized index of the two (`s0 + s1 * 2`)
/// is the merged loop's index, the row's index stays as it was.
// CHECK-LABEL: func.func @indexed_pairs
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<4x8x2xf64> into tensor<4x16xf64>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: %[[COL:.*]] = linalg.index 1 : index
// CHECK-NOT: affine.apply
// CHECK: tensor.extract %{{.*}}[%[[ROW]], %[[COL]]] : tensor<4x16xf64>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [4, 8, 2]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#lin = affine_map<()[s0, s1] -> (s0 + s1 * 2)>
func.func @indexed_pairs(%t: tensor<4x16xf64>, %y: tensor<4x8x2xf64>) -> tensor<4x8x2xf64> {
  %0 = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%y : tensor<4x8x2xf64>) {
  ^bb0(%out: f64):
    %r = linalg.index 0 : index
    %p = linalg.index 2 : index
    %c = linalg.index 1 : index
    %k = affine.apply #lin()[%p, %c]
    %v = tensor.extract %t[%r, %k] : tensor<4x16xf64>
    linalg.yield %v : f64
  } -> tensor<4x8x2xf64>
  return %0 : tensor<4x8x2xf64>
}

// -----

/// Without that linearization, an index of a merged loop is divided back out
/// of the merged one: the parts' index the remainder by 2, the other the quotient.
// CHECK-LABEL: func.func @divided_indices
// CHECK: %[[M:.*]] = linalg.index 1 : index
// CHECK: arith.divui %[[M]], %{{.*}} : index
// CHECK: %[[P:.*]] = linalg.index 1 : index
// CHECK: arith.remui %[[P]], %{{.*}} : index
#id3b = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @divided_indices(%y: tensor<4x8x2xi64>) -> tensor<4x8x2xi64> {
  %0 = linalg.generic {indexing_maps = [#id3b], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%y : tensor<4x8x2xi64>) {
  ^bb0(%out: i64):
    %c = linalg.index 1 : index
    %p = linalg.index 2 : index
    %s = arith.addi %c, %p : index
    %v = arith.index_cast %s : index to i64
    linalg.yield %v : i64
  } -> tensor<4x8x2xi64>
  return %0 : tensor<4x8x2xi64>
}

// -----

/// A transpose in generic form whose input's last two dims stay neighbours in
/// its output (FFT pairs to planes, (B, N, 2) -> (N, 2, B)): merged into the
/// 2-D (B, 2N) -> (2N, B), which the blocked transposes take (rank 3, the
/// input's contiguous loop is 2 long: gathered an element at a time). A copy
/// through the identity map is left alone.
// CHECK-DAG: #[[$T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @pairs_to_planes
// CHECK: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<180x2048x2xf32> into tensor<180x4096xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$T]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<180x4096xf32>)
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0, 1], [2]] output_shape [2048, 2, 180] : tensor<4096x180xf32> into tensor<2048x2x180xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8x16xf32>)
#planes = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
#ident = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @pairs_to_planes(%x: tensor<180x2048x2xf32>, %init: tensor<2048x2x180xf32>,
                           %y: tensor<4x8x16xf32>, %yinit: tensor<4x8x16xf32>) -> (tensor<2048x2x180xf32>, tensor<4x8x16xf32>) {
  %0 = linalg.generic {indexing_maps = [#planes, #ident], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<180x2048x2xf32>) outs(%init : tensor<2048x2x180xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<2048x2x180xf32>
  %1 = linalg.generic {indexing_maps = [#ident, #ident], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<4x8x16xf32>) outs(%yinit : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4x8x16xf32>
  return %0, %1 : tensor<2048x2x180xf32>, tensor<4x8x16xf32>
}
