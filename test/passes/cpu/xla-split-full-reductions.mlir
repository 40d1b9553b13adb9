// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-split-full-reductions)' --split-input-file | FileCheck %s

/// A convergence test, any(|x - 1| >= eps) over 405 x 648 (262440 elements, 32
/// does not divide): the rows reduced first (the compare with them, `false` as
/// their init), then the 405 rows' results into the original init.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @any
// CHECK-SAME: (%[[X:.*]]: tensor<405x648xf32>, %[[INIT:.*]]: tensor<i1>)
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: %[[E:.*]] = tensor.empty() : tensor<405xi1>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[FALSE]] : i1) outs(%[[E]] : tensor<405xi1>)
// CHECK: %[[ROWS:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<405x648xf32>) outs(%[[F]] : tensor<405xi1>) attrs = {xla.fusion_group = 3 : i64}
// CHECK: arith.subf
// CHECK: math.absf
// CHECK: arith.cmpf oge
// CHECK: arith.ori
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[ROWS]] : tensor<405xi1>) outs(%[[INIT]] : tensor<i1>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i1, %[[OUT:.*]]: i1):
// CHECK-NEXT: %[[OR:.*]] = arith.ori %[[OUT]], %[[IN]] : i1
// CHECK-NEXT: linalg.yield %[[OR]]
// CHECK: return %[[R]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>
func.func @any(%x: tensor<405x648xf32>, %init: tensor<i1>) -> tensor<i1> {
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 5.96046448E-8 : f32
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<405x648xf32>) outs(%init : tensor<i1>) attrs = {xla.fusion_group = 3 : i64} {
  ^bb0(%in: f32, %out: i1):
    %d = arith.subf %in, %one : f32
    %a = math.absf %d : f32
    %c = arith.cmpf oge, %a, %eps : f32
    %o = arith.ori %out, %c : i1
    linalg.yield %o : i1
  } -> tensor<i1>
  return %r : tensor<i1>
}

// -----

/// Signed minimum of i32 over 3 x 5 x 48: the rows' init is INT32_MAX; the
/// 3 x 5 results reduced over both dims.
// CHECK-LABEL: func.func @min3d
// CHECK: arith.constant 2147483647 : i32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} {{.*}} outs(%{{.*}} : tensor<3x5xi32>)
// CHECK: arith.minsi
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%{{.*}} : tensor<3x5xi32>)
// CHECK: arith.minsi
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#s3 = affine_map<(d0, d1, d2) -> ()>
func.func @min3d(%x: tensor<3x5x48xi32>, %init: tensor<i32>) -> tensor<i32> {
  %r = linalg.generic {indexing_maps = [#id3, #s3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%x : tensor<3x5x48xi32>) outs(%init : tensor<i32>) {
  ^bb0(%in: i32, %out: i32):
    %m = arith.minsi %in, %out : i32
    linalg.yield %m : i32
  } -> tensor<i32>
  return %r : tensor<i32>
}

// -----

/// Left alone: a float sum (not exact: the grouping changes its bits), a
/// length 32 divides (the 1-D schedule splits it already), rows shorter than
/// a vector, and a reduction keeping a dim.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#s2 = affine_map<(d0, d1) -> ()>
#r2 = affine_map<(d0, d1) -> (d0)>
func.func @kept(%f: tensor<405x648xf32>, %finit: tensor<f32>, %i: tensor<64x32xi1>, %s: tensor<405x8xi1>,
                %init: tensor<i1>, %rinit: tensor<405xi1>, %b: tensor<405x648xi1>) -> (tensor<f32>, tensor<i1>, tensor<i1>, tensor<405xi1>) {
  %0 = linalg.generic {indexing_maps = [#id2, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%f : tensor<405x648xf32>) outs(%finit : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %1 = linalg.generic {indexing_maps = [#id2, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%i : tensor<64x32xi1>) outs(%init : tensor<i1>) {
  ^bb0(%in: i1, %out: i1):
    %a = arith.ori %in, %out : i1
    linalg.yield %a : i1
  } -> tensor<i1>
  %2 = linalg.generic {indexing_maps = [#id2, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%s : tensor<405x8xi1>) outs(%init : tensor<i1>) {
  ^bb0(%in: i1, %out: i1):
    %a = arith.ori %in, %out : i1
    linalg.yield %a : i1
  } -> tensor<i1>
  %3 = linalg.generic {indexing_maps = [#id2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<405x648xi1>) outs(%rinit : tensor<405xi1>) {
  ^bb0(%in: i1, %out: i1):
    %a = arith.ori %in, %out : i1
    linalg.yield %a : i1
  } -> tensor<405xi1>
  return %0, %1, %2, %3 : tensor<f32>, tensor<i1>, tensor<i1>, tensor<405xi1>
}
