// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-peel-roll-columns{threads=2 vector-bytes=32})' --split-input-file | FileCheck %s

/// A roll by 1 along the last axis (x[:, 39:] then x[:, :39]) picked per
/// column: the rows are split among the threads (2048 rows of 4 reads an
/// element: 8 chunks of 256, each dividing the rows), and each chunk's columns
/// are stretches in one scf.forall: [0, 1) reads the wrapped column, [1, 33)
/// the straight slice at (j + 1) - 1 = j in whole 8-lane vectors, [33, 40) the
/// rest of it at j + 32 (shorter than a vector: vectorized whole, no mask).
/// The chunk's row offset is an arith.addi (no affine.apply in a body). No
/// branch is left.
// CHECK-LABEL: func.func @roll_by_one
// CHECK-NOT: scf.if
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: %[[ROW0:.*]] = affine.apply
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<256x1xf32>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[ROW:.*]] = arith.addi %[[ROW0]], %[[I]]
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: tensor.extract %{{.*}}[%[[ROW]], %[[J]]] : tensor<2048x1xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 0] [256, 1] [1, 1]
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<256x32xf32>)
// CHECK: %[[J2:.*]] = linalg.index 1
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %[[J2]]] : tensor<2048x39xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 1] [256, 32] [1, 1]
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<256x7xf32>)
// CHECK: %[[J3:.*]] = linalg.index 1
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[K3:.*]] = arith.addi %[[J3]], %[[C32]]
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %[[K3]]] : tensor<2048x39xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 33] [256, 7] [1, 1]
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.*}} [256, 40] [1, 1]
// CHECK-NOT: scf.if
func.func @roll_by_one(%x: tensor<2048x40xf32>, %y: tensor<2048x40xf32>) -> tensor<2048x40xf32> {
  %c1 = arith.constant 1 : index
  %a = tensor.extract_slice %x[0, 39] [2048, 1] [1, 1] : tensor<2048x40xf32> to tensor<2048x1xf32>
  %b = tensor.extract_slice %x[0, 0] [2048, 39] [1, 1] : tensor<2048x40xf32> to tensor<2048x39xf32>
  %e = tensor.empty() : tensor<2048x40xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<2048x40xf32>) outs(%e : tensor<2048x40xf32>) {
  ^bb0(%s: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %wrap = arith.cmpi ult, %j, %c1 : index
    %v = scf.if %wrap -> (f32) {
      %p = tensor.extract %a[%i, %j] : tensor<2048x1xf32>
      scf.yield %p : f32
    } else {
      %k = arith.subi %j, %c1 : index
      %q = tensor.extract %b[%i, %k] : tensor<2048x39xf32>
      scf.yield %q : f32
    }
    %m = arith.mulf %v, %s : f32
    linalg.yield %m : f32
  } -> tensor<2048x40xf32>
  return %r : tensor<2048x40xf32>
}

// -----

/// A pick along the rows (a roll along the first axis) is no column pick: the
/// loop is left as it is (xla-speculate-branch-reads makes it a select).
// CHECK-LABEL: func.func @roll_rows
// CHECK-NOT: scf.forall
// CHECK: scf.if
func.func @roll_rows(%x: tensor<2048x40xf32>) -> tensor<2048x40xf32> {
  %c1 = arith.constant 1 : index
  %a = tensor.extract_slice %x[2047, 0] [1, 40] [1, 1] : tensor<2048x40xf32> to tensor<1x40xf32>
  %b = tensor.extract_slice %x[0, 0] [2047, 40] [1, 1] : tensor<2048x40xf32> to tensor<2047x40xf32>
  %e = tensor.empty() : tensor<2048x40xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<2048x40xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %wrap = arith.cmpi ult, %i, %c1 : index
    %v = scf.if %wrap -> (f32) {
      %p = tensor.extract %a[%i, %j] : tensor<1x40xf32>
      scf.yield %p : f32
    } else {
      %k = arith.subi %i, %c1 : index
      %q = tensor.extract %b[%k, %j] : tensor<2047x40xf32>
      scf.yield %q : f32
    }
    linalg.yield %v : f32
  } -> tensor<2048x40xf32>
  return %r : tensor<2048x40xf32>
}
