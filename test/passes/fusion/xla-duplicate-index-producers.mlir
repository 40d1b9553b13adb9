// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-duplicate-index-producers)' --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// An argmax and an argmin reading one iota: a copy of it before each, the
/// original gone.
// CHECK-LABEL: func.func @argmax_and_argmin
// CHECK: %[[I1:.*]] = linalg.generic {{.*}}outs(
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.index 1
// CHECK: linalg.generic {{.*}}ins(%arg0, %[[I1]] :
// CHECK: arith.cmpi sgt
// CHECK: %[[I2:.*]] = linalg.generic {{.*}}outs(
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.index 1
// CHECK: linalg.generic {{.*}}ins(%arg0, %[[I2]] :
// CHECK: arith.cmpi slt
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @argmax_and_argmin(%x: tensor<4x8xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %e = tensor.empty() : tensor<4x8xi32>
  %iota = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x8xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    linalg.yield %c : i32
  } -> tensor<4x8xi32>
  %zero = arith.constant 0 : i32
  %er = tensor.empty() : tensor<4xi32>
  %init = linalg.fill ins(%zero : i32) outs(%er : tensor<4xi32>) -> tensor<4xi32>
  %a:2 = linalg.generic {indexing_maps = [#id, #id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %iota : tensor<4x8xi32>, tensor<4x8xi32>) outs(%init, %init : tensor<4xi32>, tensor<4xi32>) {
  ^bb0(%v: i32, %i: i32, %av: i32, %ai: i32):
    %gt = arith.cmpi sgt, %av, %v : i32
    %m = arith.select %gt, %av, %v : i32
    %mi = arith.select %gt, %ai, %i : i32
    linalg.yield %m, %mi : i32, i32
  } -> (tensor<4xi32>, tensor<4xi32>)
  %b:2 = linalg.generic {indexing_maps = [#id, #id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %iota : tensor<4x8xi32>, tensor<4x8xi32>) outs(%init, %init : tensor<4xi32>, tensor<4xi32>) {
  ^bb0(%v: i32, %i: i32, %av: i32, %ai: i32):
    %lt = arith.cmpi slt, %av, %v : i32
    %m = arith.select %lt, %av, %v : i32
    %mi = arith.select %lt, %ai, %i : i32
    linalg.yield %m, %mi : i32, i32
  } -> (tensor<4xi32>, tensor<4xi32>)
  return %a#1, %b#1 : tensor<4xi32>, tensor<4xi32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// Read through a collapse_shape (flattened reduction dims): the reshape is
/// copied with the iota, each reader its own pair.
// CHECK-LABEL: func.func @through_a_reshape
// CHECK: %[[I1:.*]] = linalg.generic
// CHECK: %[[C1:.*]] = tensor.collapse_shape %[[I1]]
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[C1]] :
// CHECK: %[[I2:.*]] = linalg.generic
// CHECK: %[[C2:.*]] = tensor.collapse_shape %[[I2]]
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[C2]] :
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
func.func @through_a_reshape(%x: tensor<2x3x8xf32>) -> (tensor<6xi32>, tensor<6xi32>) {
  %e = tensor.empty() : tensor<2x3x8xi32>
  %iota = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<2x3x8xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 2 : index
    %c = arith.index_cast %i : index to i32
    linalg.yield %c : i32
  } -> tensor<2x3x8xi32>
  %xc = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  %ic = tensor.collapse_shape %iota [[0, 1], [2]] : tensor<2x3x8xi32> into tensor<6x8xi32>
  %zero = arith.constant 0 : i32
  %ninf = arith.constant 0xFF800000 : f32
  %er = tensor.empty() : tensor<6xi32>
  %ef = tensor.empty() : tensor<6xf32>
  %init = linalg.fill ins(%zero : i32) outs(%er : tensor<6xi32>) -> tensor<6xi32>
  %initf = linalg.fill ins(%ninf : f32) outs(%ef : tensor<6xf32>) -> tensor<6xf32>
  %a:2 = linalg.generic {indexing_maps = [#id, #id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xc, %ic : tensor<6x8xf32>, tensor<6x8xi32>) outs(%initf, %init : tensor<6xf32>, tensor<6xi32>) {
  ^bb0(%v: f32, %i: i32, %av: f32, %ai: i32):
    %gt = arith.cmpf ogt, %av, %v : f32
    %m = arith.select %gt, %av, %v : f32
    %mi = arith.select %gt, %ai, %i : i32
    linalg.yield %m, %mi : f32, i32
  } -> (tensor<6xf32>, tensor<6xi32>)
  %b:2 = linalg.generic {indexing_maps = [#id, #id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xc, %ic : tensor<6x8xf32>, tensor<6x8xi32>) outs(%initf, %init : tensor<6xf32>, tensor<6xi32>) {
  ^bb0(%v: f32, %i: i32, %av: f32, %ai: i32):
    %lt = arith.cmpf olt, %av, %v : f32
    %m = arith.select %lt, %av, %v : f32
    %mi = arith.select %lt, %ai, %i : i32
    linalg.yield %m, %mi : f32, i32
  } -> (tensor<6xf32>, tensor<6xi32>)
  return %a#1, %b#1 : tensor<6xi32>, tensor<6xi32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// Also returned: the iota is written anyway, nothing is copied.
// CHECK-LABEL: func.func @returned
// CHECK: %[[I:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}}ins(%arg0, %[[I]] :
// CHECK: linalg.generic {{.*}}ins(%arg0, %[[I]] :
// CHECK: return %{{.*}}, %[[I]]
func.func @returned(%x: tensor<4x8xi32>) -> (tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>) {
  %e = tensor.empty() : tensor<4x8xi32>
  %iota = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x8xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    linalg.yield %c : i32
  } -> tensor<4x8xi32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %iota : tensor<4x8xi32>, tensor<4x8xi32>) outs(%e : tensor<4x8xi32>) {
  ^bb0(%v: i32, %i: i32, %o: i32):
    %s = arith.addi %v, %i : i32
    linalg.yield %s : i32
  } -> tensor<4x8xi32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %iota : tensor<4x8xi32>, tensor<4x8xi32>) outs(%e : tensor<4x8xi32>) {
  ^bb0(%v: i32, %i: i32, %o: i32):
    %s = arith.muli %v, %i : i32
    linalg.yield %s : i32
  } -> tensor<4x8xi32>
  return %a, %b, %iota : tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>
}

// -----

/// A broadcast of a 0-d constant (select_and_scatter's init: the first
/// window's accumulator and its unchanged value) read by two generics: a copy
/// each, so fusion folds it into both and it is never written.
// CHECK-LABEL: func.func @splat_constant
// CHECK: %[[C:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[B1:.*]] = linalg.generic {{.*}}ins(%[[C]] : tensor<f32>)
// CHECK: linalg.generic {{.*}}ins(%[[B1]], %arg0 :
// CHECK: arith.addf
// CHECK: %[[B2:.*]] = linalg.generic {{.*}}ins(%[[C]] : tensor<f32>)
// CHECK: linalg.generic {{.*}}ins(%arg1, %{{.*}}, %[[B2]] :
// CHECK: arith.select
#s0 = affine_map<(d0) -> ()>
#s1 = affine_map<(d0) -> (d0)>
func.func @splat_constant(%x: tensor<8xf32>, %p: tensor<8xi1>) -> tensor<8xf32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.generic {indexing_maps = [#s0, #s1], iterator_types = ["parallel"]}
      ins(%c : tensor<f32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#s1, #s1, #s1], iterator_types = ["parallel"]}
      ins(%init, %x : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %sel = linalg.generic {indexing_maps = [#s1, #s1, #s1, #s1], iterator_types = ["parallel"]}
      ins(%p, %sum, %init : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%q: i1, %a: f32, %b: f32, %o: f32):
    %r = arith.select %q, %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sel : tensor<8xf32>
}
