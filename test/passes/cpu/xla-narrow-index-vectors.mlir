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

// -----

/// A column gather's addresses: an i32 index read from memory, clamped to
/// 0 .. 1023, plus the row (a loop variable below 512) times 1024: all below
/// 2^19, so the tree is built in i32 (the clamps too: their operands fit) and
/// the gather takes i32 indices (8 lanes per AVX2 gather, not 4).
// CHECK-LABEL: func.func @clamped_column_gather
// CHECK: %[[IDS:.*]] = vector.load %arg1
// CHECK: %[[LO:.*]] = arith.maxsi %[[IDS]], %{{.*}} : vector<8xi32>
// CHECK: %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : vector<8xi32>
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: %[[AT:.*]] = arith.addi %[[HI]], %[[ROW]] : vector<8xi32>
// CHECK: vector.gather %arg0[%{{.*}}, %{{.*}}] [%[[AT]]], {{.*}} : memref<512x1024xi32>, vector<8xi32>, vector<8xi1>
func.func @clamped_column_gather(%table: memref<512x1024xi32>, %ids: memref<8xi32>, %out: memref<512x8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant dense<0> : vector<8xindex>
  %last = arith.constant dense<1023> : vector<8xindex>
  %width = arith.constant dense<1024> : vector<8xindex>
  %mask = arith.constant dense<true> : vector<8xi1>
  %pass = arith.constant dense<0> : vector<8xi32>
  scf.for %r = %c0 to %c512 step %c1 {
    %i = vector.load %ids[%c0] : memref<8xi32>, vector<8xi32>
    %x = arith.index_cast %i : vector<8xi32> to vector<8xindex>
    %lo = arith.maxsi %x, %zero : vector<8xindex>
    %hi = arith.minsi %lo, %last : vector<8xindex>
    %row = vector.broadcast %r : index to vector<8xindex>
    %offset = arith.muli %row, %width : vector<8xindex>
    %at = arith.addi %hi, %offset : vector<8xindex>
    %g = vector.gather %table[%c0, %c0] [%at], %mask, %pass : memref<512x1024xi32>, vector<8xindex>, vector<8xi1>, vector<8xi32> into vector<8xi32>
    vector.store %g, %out[%r, %c0] : memref<512x8xi32>, vector<8xi32>
  }
  return
}

// -----

/// Kept with index offsets: an i64 index unclamped (any value), an unsigned
/// i32 (up to 2^32 - 1), a clamp to a bound past i32. A select of two
/// narrowable values narrows; a signed max truncated to i8 keeps its operands'
/// order only where they fit i8, so past that it is computed wide and cast.
// CHECK-LABEL: func.func @gathers_kept
// CHECK: vector.gather {{.*}} : memref<?xf32>, vector<4xindex>
// CHECK: vector.gather {{.*}} : memref<?xf32>, vector<4xindex>
// CHECK: vector.gather {{.*}} : memref<?xf32>, vector<4xindex>
// CHECK: arith.select %arg4, %{{.*}}, %{{.*}} : vector<4xi1>, vector<4xi32>
// CHECK: vector.gather {{.*}} : memref<?xf32>, vector<4xi32>
// CHECK: %[[WIDE:.*]] = arith.maxsi %{{.*}}, %{{.*}} : vector<4xindex>
// CHECK: arith.index_cast %[[WIDE]] : vector<4xindex> to vector<4xi8>
func.func @gathers_kept(%t: memref<?xf32>, %a: vector<4xi64>, %b: vector<4xi32>, %c: vector<4xi16>, %p: vector<4xi1>)
    -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xi8>) {
  %c0 = arith.constant 0 : index
  %mask = arith.constant dense<true> : vector<4xi1>
  %pass = arith.constant dense<0.0> : vector<4xf32>
  %zero = arith.constant dense<0> : vector<4xindex>
  %far = arith.constant dense<4294967296> : vector<4xindex>
  %s = vector.step : vector<4xindex>
  %x = arith.index_cast %a : vector<4xi64> to vector<4xindex>
  %x1 = arith.addi %x, %s : vector<4xindex>
  %g1 = vector.gather %t[%c0] [%x1], %mask, %pass : memref<?xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  %y = arith.index_castui %b : vector<4xi32> to vector<4xindex>
  %y1 = arith.addi %y, %s : vector<4xindex>
  %g2 = vector.gather %t[%c0] [%y1], %mask, %pass : memref<?xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  %z = arith.maxsi %x, %zero : vector<4xindex>
  %z1 = arith.minsi %z, %far : vector<4xindex>
  %g3 = vector.gather %t[%c0] [%z1], %mask, %pass : memref<?xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  %w = arith.index_cast %c : vector<4xi16> to vector<4xindex>
  %w1 = arith.select %p, %w, %s : vector<4xi1>, vector<4xindex>
  %g4 = vector.gather %t[%c0] [%w1], %mask, %pass : memref<?xf32>, vector<4xindex>, vector<4xi1>, vector<4xf32> into vector<4xf32>
  %m = arith.maxsi %w, %s : vector<4xindex>
  %m8 = arith.index_cast %m : vector<4xindex> to vector<4xi8>
  return %g1, %g2, %g3, %g4, %m8 : vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xi8>
}

// -----

/// An i64 iota's compare (jax.jacfwd's diagonal `iota_i == iota_j`): a row's
/// index and a column's lanes fit i32 (loop bounds), so they are compared as
/// i32, as is a tree against a constant that fits; an unsigned order too.
// CHECK-LABEL: func.func @diagonal_compare
// CHECK-NOT: vector<16xi64>
// CHECK: %[[COL:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[ROW:.*]] = vector.broadcast %[[I]] : i32 to vector<16xi32>
// CHECK: arith.cmpi eq, %[[COL]], %[[ROW]] : vector<16xi32>
// CHECK: %[[SEVEN:.*]] = arith.constant dense<7> : vector<16xi32>
// CHECK: arith.cmpi ult, %{{.*}}, %[[SEVEN]] : vector<16xi32>
func.func @diagonal_compare(%out: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %seven = arith.constant dense<7> : vector<16xi64>
  %r = scf.for %i = %c0 to %c64 step %c1 iter_args(%a = %out) -> (tensor<64x64xf32>) {
    %r2 = scf.for %j = %c0 to %c64 step %c16 iter_args(%b = %a) -> (tensor<64x64xf32>) {
      %bi = vector.broadcast %i : index to vector<16xindex>
      %s = vector.step : vector<16xindex>
      %bj = vector.broadcast %j : index to vector<16xindex>
      %vj = arith.addi %bj, %s : vector<16xindex>
      %ci = arith.index_cast %bi : vector<16xindex> to vector<16xi64>
      %cj = arith.index_castui %vj : vector<16xindex> to vector<16xi64>
      %m = arith.cmpi eq, %cj, %ci : vector<16xi64>
      %n = arith.cmpi ult, %cj, %seven : vector<16xi64>
      %mn = arith.andi %m, %n : vector<16xi1>
      %f = arith.uitofp %mn : vector<16xi1> to vector<16xf32>
      %w = vector.transfer_write %f, %b[%i, %j] {in_bounds = [true]} : vector<16xf32>, tensor<64x64xf32>
      scf.yield %w : tensor<64x64xf32>
    }
    scf.yield %r2 : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

/// Left alone: a vector no index tree builds (an argument), a value beyond
/// i32 (an index times 2^32), a scalar compare.
// CHECK-LABEL: func.func @compares_kept
// CHECK: arith.cmpi eq, %{{.*}}, %arg1 : vector<4xi64>
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : vector<4xi64>
// CHECK: arith.cmpi sgt, %arg2, %arg3 : i64
func.func @compares_kept(%j: index, %v: vector<4xi64>, %x: i64, %y: i64) -> (vector<4xi1>, vector<4xi1>, i1) {
  %s = vector.step : vector<4xindex>
  %b = vector.broadcast %j : index to vector<4xindex>
  %w = arith.addi %b, %s : vector<4xindex>
  %c = arith.index_cast %w : vector<4xindex> to vector<4xi64>
  %e = arith.cmpi eq, %c, %v : vector<4xi64>
  %big = arith.constant dense<4294967296> : vector<4xindex>
  %f = arith.muli %s, %big : vector<4xindex>
  %g = arith.index_cast %f : vector<4xindex> to vector<4xi64>
  %l = arith.cmpi slt, %c, %g : vector<4xi64>
  %k = arith.cmpi sgt, %x, %y : i64
  return %e, %l, %k : vector<4xi1>, vector<4xi1>, i1
}
