// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-narrow-index-vectors)' --split-input-file | FileCheck %s

/// An iota's lanes: the broadcast start plus the step, cast to i8, become the
/// start cast once, broadcast in i8, plus the constant 0 .. n-1 in i8
/// (values wrap as the truncation does).
// CHECK-LABEL: func.func @iota_lanes
// CHECK: %[[J:.*]] = arith.index_cast %arg0 : index to i8
// CHECK: %[[B:.*]] = vector.broadcast %[[J]] : i8 to vector<4xi8>
// CHECK: %[[STEP:.*]] = arith.constant dense<[0, 1, 2, 3]> : vector<4xi8>
// CHECK: %[[S:.*]] = arith.addi %[[B]], %[[STEP]] : vector<4xi8>
// CHECK: return %[[S]]
func.func @iota_lanes(%j: index) -> vector<4xi8> {
  %s = vector.step : vector<4xindex>
  %b = vector.broadcast %j : index to vector<4xindex>
  %v = arith.addi %b, %s : vector<4xindex>
  %c = arith.index_cast %v : vector<4xindex> to vector<4xi8>
  return %c : vector<4xi8>
}

// -----

/// Products and constants narrow too; a vector the tree cannot see into (an
/// argument) is cast where it is read.
// CHECK-LABEL: func.func @strided_lanes
// CHECK: %[[V:.*]] = arith.index_cast %arg1 : vector<4xindex> to vector<4xi16>
// CHECK: %[[THREE:.*]] = arith.constant dense<3> : vector<4xi16>
// CHECK: %[[M:.*]] = arith.muli %[[V]], %[[THREE]] : vector<4xi16>
// CHECK: return %[[M]]
func.func @strided_lanes(%j: index, %v: vector<4xindex>) -> vector<4xi16> {
  %three = arith.constant dense<3> : vector<4xindex>
  %m = arith.muli %v, %three : vector<4xindex>
  %c = arith.index_castui %m : vector<4xindex> to vector<4xi16>
  return %c : vector<4xi16>
}

// -----

/// Left alone: a cast to i64 (nothing to narrow), a scalar cast, a vector
/// cast of a value no rewritable op builds.
// CHECK-LABEL: func.func @kept
// CHECK: arith.index_cast %{{.*}} : vector<4xindex> to vector<4xi64>
// CHECK: arith.index_cast %arg0 : index to i8
// CHECK: arith.index_cast %arg1 : vector<4xindex> to vector<4xi8>
func.func @kept(%j: index, %v: vector<4xindex>) -> (vector<4xi64>, i8, vector<4xi8>) {
  %s = vector.step : vector<4xindex>
  %b = vector.broadcast %j : index to vector<4xindex>
  %w = arith.addi %b, %s : vector<4xindex>
  %a = arith.index_cast %w : vector<4xindex> to vector<4xi64>
  %c = arith.index_cast %j : index to i8
  %d = arith.index_cast %v : vector<4xindex> to vector<4xi8>
  return %a, %c, %d : vector<4xi64>, i8, vector<4xi8>
}

// -----

/// An f64 iota's lanes: the loop's induction variable (0 .. 1020) plus the
/// step fit i32, so they are added and converted as i32 (AVX2 converts i32
/// lanes to f64 in one instruction, i64 lanes one by one). An affine.apply of
/// a bounded loop variable counts too.
// CHECK-LABEL: func.func @f64_iota_lanes
// CHECK: %[[J:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[B:.*]] = vector.broadcast %[[J]] : i32 to vector<4xi32>
// CHECK: %[[S:.*]] = arith.addi %[[B]], %{{.*}} : vector<4xi32>
// CHECK: arith.sitofp %[[S]] : vector<4xi32> to vector<4xf64>
// CHECK-NOT: vector<4xi64>
// CHECK: arith.index_cast %{{.*}} : index to i32
// CHECK: arith.sitofp %{{.*}} : vector<4xi32> to vector<4xf32>
// CHECK-NOT: vector<4xi64>
func.func @f64_iota_lanes(%out: memref<1024xf64>, %out2: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  scf.for %j = %c0 to %c1024 step %c4 {
    %s = vector.step : vector<4xindex>
    %b = vector.broadcast %j : index to vector<4xindex>
    %v = arith.addi %b, %s : vector<4xindex>
    %c = arith.index_cast %v : vector<4xindex> to vector<4xi64>
    %f = arith.sitofp %c : vector<4xi64> to vector<4xf64>
    vector.store %f, %out[%j] : memref<1024xf64>, vector<4xf64>
  }
  scf.forall (%i) in (4) {
    %k = affine.apply affine_map<(d0) -> (d0 * 256 + 252)>(%i)
    %s = vector.step : vector<4xindex>
    %b = vector.broadcast %k : index to vector<4xindex>
    %v = arith.addi %b, %s : vector<4xindex>
    %c = arith.index_castui %v : vector<4xindex> to vector<4xi64>
    %f = arith.uitofp %c : vector<4xi64> to vector<4xf32>
    vector.store %f, %out2[%k] : memref<1024xf32>, vector<4xf32>
  }
  return
}

// -----

/// Kept in i64: a loop bound past i32, or a leaf of unknown range (an argument).
// CHECK-LABEL: func.func @f64_lanes_kept
// CHECK: arith.sitofp %{{.*}} : vector<4xi64> to vector<4xf64>
// CHECK: arith.sitofp %{{.*}} : vector<4xi64> to vector<4xf64>
func.func @f64_lanes_kept(%n: index, %out: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %big = arith.constant 4294967296 : index
  scf.for %j = %c0 to %big step %c4 {
    %s = vector.step : vector<4xindex>
    %b = vector.broadcast %j : index to vector<4xindex>
    %v = arith.addi %b, %s : vector<4xindex>
    %c = arith.index_cast %v : vector<4xindex> to vector<4xi64>
    %f = arith.sitofp %c : vector<4xi64> to vector<4xf64>
    vector.store %f, %out[%c0] : memref<?xf64>, vector<4xf64>
  }
  %s = vector.step : vector<4xindex>
  %b = vector.broadcast %n : index to vector<4xindex>
  %v = arith.addi %b, %s : vector<4xindex>
  %c = arith.index_cast %v : vector<4xindex> to vector<4xi64>
  %f = arith.sitofp %c : vector<4xi64> to vector<4xf64>
  vector.store %f, %out[%c0] : memref<?xf64>, vector<4xf64>
  return
}
