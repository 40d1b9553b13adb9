// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-hoist-loop-invariants)' --split-input-file | FileCheck %s

/// jax.jacfwd(jnp.sin)'s row: x[i] read as a broadcast and its cosine (a
/// libm call per lane) do not depend on the column loop: computed once before
/// it. Only the calls and what they read move: the index vectors, invariant
/// too, stay (hoisting every invariant made BERT's compile 3.5x slower for no
/// run time).
// CHECK-LABEL: func.func @row_invariants
// CHECK: scf.for %[[I:.*]] = %c0 to %c64 step %c1
// CHECK-NEXT: %[[X:.*]] = vector.transfer_read %arg0[%[[I]]]
// CHECK-NEXT: %[[C:.*]] = math.cos %[[X]] : vector<16xf32>
// CHECK-NEXT: scf.for %[[J:.*]] = %c0 to %c64 step %c16
// CHECK-NEXT: vector.broadcast %[[I]] : index to vector<16xindex>
// CHECK:     arith.cmpi eq
// CHECK:     arith.mulf %{{.*}}, %[[C]]
// CHECK:     vector.transfer_write
#bcast = affine_map<(d0) -> (0)>
func.func @row_invariants(%x: tensor<64xf32>, %out: tensor<64x64xf32>, %off: index) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = ub.poison : f32
  %r = scf.for %i = %c0 to %c64 step %c1 iter_args(%a = %out) -> (tensor<64x64xf32>) {
    %r2 = scf.for %j = %c0 to %c64 step %c16 iter_args(%b = %a) -> (tensor<64x64xf32>) {
      %xi = vector.transfer_read %x[%i], %pad {in_bounds = [true], permutation_map = #bcast} : tensor<64xf32>, vector<16xf32>
      %cos = math.cos %xi : vector<16xf32>
      %bi = vector.broadcast %i : index to vector<16xindex>
      %bo = vector.broadcast %off : index to vector<16xindex>
      %row = arith.addi %bi, %bo : vector<16xindex>
      %s = vector.step : vector<16xindex>
      %bj = vector.broadcast %j : index to vector<16xindex>
      %col = arith.addi %bj, %s : vector<16xindex>
      %m = arith.cmpi eq, %col, %row : vector<16xindex>
      %f = arith.uitofp %m : vector<16xi1> to vector<16xf32>
      %v = arith.mulf %f, %cos : vector<16xf32>
      %w = vector.transfer_write %v, %b[%i, %j] {in_bounds = [true]} : vector<16xf32>, tensor<64x64xf32>
      scf.yield %w : tensor<64x64xf32>
    }
    scf.yield %r2 : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

/// Left in place: everything in a loop with no libm call, in a loop whose
/// bounds are not constants (it may run no trip: a read there may be out of
/// bounds), in a loop that runs no trip, a read of a buffer (the loop may
/// write it), a read of the loop's own tensor, and an op with a region.
// CHECK-LABEL: func.func @kept
// CHECK: scf.for
// CHECK-NEXT: vector.transfer_read %arg0
// CHECK: scf.for
// CHECK-NEXT: arith.divsi
// CHECK: scf.for
// CHECK-NEXT: vector.transfer_read %arg1
// CHECK: scf.for
// CHECK-NEXT: scf.if
// CHECK: tensor.extract %arg
func.func @kept(%x: tensor<64xf32>, %m: memref<64xf32>, %n: index, %d: i32, %cond: i1) -> (f32, i32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : i32
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant 0.0 : f32
  %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (f32) {
    %v = vector.transfer_read %x[%c0], %pad {in_bounds = [true]} : tensor<64xf32>, vector<4xf32>
    %e = vector.extract %v[0] : f32 from vector<4xf32>
    %sn = math.sin %e : f32
    %s = arith.addf %a, %sn : f32
    scf.yield %s : f32
  }
  %r2 = scf.for %i = %c4 to %c0 step %c1 iter_args(%a = %c7) -> (i32) {
    %q = arith.divsi %c7, %d : i32
    scf.yield %q : i32
  }
  %r3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (f32) {
    %v = vector.transfer_read %m[%c0], %pad {in_bounds = [true]} : memref<64xf32>, vector<4xf32>
    %e = vector.extract %v[0] : f32 from vector<4xf32>
    %sn = math.sin %e : f32
    memref.store %sn, %m[%i] : memref<64xf32>
    scf.yield %e : f32
  }
  %r4:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %zero, %t = %x) -> (f32, tensor<64xf32>) {
    %p = scf.if %cond -> (f32) {
      scf.yield %pad : f32
    } else {
      scf.yield %zero : f32
    }
    %e = tensor.extract %t[%c0] : tensor<64xf32>
    %t2 = tensor.insert %p into %t[%i] : tensor<64xf32>
    %pe = arith.addf %p, %e : f32
    scf.yield %pe, %t2 : f32, tensor<64xf32>
  }
  return %r1, %r2, %r3, %r4#0 : f32, i32, f32, f32
}

// -----

/// A vector integer division on invariant values (betainc's trip counter,
/// `n % 2` per element: a scalar division a lane at every ISA) leaves the loop
/// with what it reads, as a libm call does.
// CHECK-LABEL: func.func @integer_division
// CHECK: vector.broadcast %arg1
// CHECK-NEXT: arith.remsi
// CHECK-NEXT: scf.for
func.func @integer_division(%out: tensor<64xi64>, %n: i64) -> tensor<64xi64> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant dense<2> : vector<16xi64>
  %r = scf.for %j = %c0 to %c64 step %c16 iter_args(%b = %out) -> (tensor<64xi64>) {
    %bn = vector.broadcast %n : i64 to vector<16xi64>
    %m = arith.remsi %bn, %two : vector<16xi64>
    %w = vector.transfer_write %m, %b[%j] {in_bounds = [true]} : vector<16xi64>, tensor<64xi64>
    scf.yield %w : tensor<64xi64>
  }
  return %r : tensor<64xi64>
}
