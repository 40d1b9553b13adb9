// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-speculate-branch-reads)' --split-input-file | FileCheck %s

/// A class token before the patches (a concatenate fused into its consumer):
/// both reads run, the token's row index clamped to its one row, the patches'
/// shifted index clamped into their 196; the loops' own indices stay as they are.
// CHECK-LABEL: func.func @class_token
// CHECK-NOT: scf.if
// CHECK-DAG: %[[I:.*]] = linalg.index 0
// CHECK-DAG: %[[J:.*]] = linalg.index 1
// CHECK-DAG: %[[K:.*]] = linalg.index 2
// CHECK-DAG: %[[FIRST:.*]] = arith.cmpi ult, %[[J]]
// CHECK: %[[JLOW:.*]] = arith.maxsi %[[J]], %[[C0:.*]] : index
// CHECK: %[[JC:.*]] = arith.minsi %[[JLOW]], %[[C0B:.*]] : index
// CHECK: %[[A:.*]] = tensor.extract %{{.*}}[%[[I]], %[[JC]], %[[K]]] : tensor<4x1x192xf32>
// CHECK: %[[SHIFT:.*]] = arith.subi %[[J]]
// CHECK: %[[SLOW:.*]] = arith.maxsi %[[SHIFT]]
// CHECK: %[[SC:.*]] = arith.minsi %[[SLOW]], %[[C195:.*]] : index
// CHECK: %[[B:.*]] = tensor.extract %{{.*}}[%[[I]], %[[SC]], %[[K]]] : tensor<4x196x192xf32>
// CHECK: %[[PICK:.*]] = arith.select %[[FIRST]], %[[A]], %[[B]] : f32
// CHECK: arith.mulf %[[PICK]]
func.func @class_token(%cls: tensor<4x1x192xf32>, %patches: tensor<4x196x192xf32>,
                       %scale: tensor<4x197x192xf32>) -> tensor<4x197x192xf32> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x197x192xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scale : tensor<4x197x192xf32>) outs(%e : tensor<4x197x192xf32>) {
  ^bb0(%s: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %first = arith.cmpi ult, %j, %c1 : index
    %v = scf.if %first -> (f32) {
      %a = tensor.extract %cls[%i, %j, %k] : tensor<4x1x192xf32>
      scf.yield %a : f32
    } else {
      %shifted = arith.subi %j, %c1 : index
      %b = tensor.extract %patches[%i, %shifted, %k] : tensor<4x196x192xf32>
      scf.yield %b : f32
    }
    %m = arith.mulf %v, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x197x192xf32>
  return %r : tensor<4x197x192xf32>
}

// -----

/// A branch that divides could fault when not taken: it stays a branch.
// CHECK-LABEL: func.func @division
// CHECK: scf.if
// CHECK: arith.divsi
func.func @division(%a: tensor<8xi32>, %d: tensor<8xi32>) -> tensor<8xi32> {
  %e = tensor.empty() : tensor<8xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                        affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a, %d : tensor<8xi32>, tensor<8xi32>) outs(%e : tensor<8xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %zero = arith.constant 0 : i32
    %nonzero = arith.cmpi ne, %y, %zero : i32
    %q = scf.if %nonzero -> (i32) {
      %v = arith.divsi %x, %y : i32
      scf.yield %v : i32
    } else {
      scf.yield %zero : i32
    }
    linalg.yield %q : i32
  } -> tensor<8xi32>
  return %r : tensor<8xi32>
}

// -----

/// A 0-d tensor's element in one branch (a padding value): nothing to clamp.
// CHECK-LABEL: func.func @scalar_fill
// CHECK-NOT: scf.if
// CHECK: %[[V:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: arith.select %{{.*}}, %[[V]], %{{.*}} : f32
func.func @scalar_fill(%x: tensor<8x64xf32>, %fill: tensor<f32>) -> tensor<9x64xf32> {
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<9x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} outs(%e : tensor<9x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %last = arith.cmpi uge, %i, %c8 : index
    %v = scf.if %last -> (f32) {
      %f = tensor.extract %fill[] : tensor<f32>
      scf.yield %f : f32
    } else {
      %a = tensor.extract %x[%i, %j] : tensor<8x64xf32>
      scf.yield %a : f32
    }
    linalg.yield %v : f32
  } -> tensor<9x64xf32>
  return %r : tensor<9x64xf32>
}
