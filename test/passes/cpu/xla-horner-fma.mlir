// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-horner-fma)' --split-input-file | FileCheck %s

/// chlo's polynomial, as vectorization leaves it: three Horner steps on
/// constant coefficients, each a multiply and an add, become three FMAs.
// CHECK-LABEL: func.func @horner
// CHECK-SAME: (%[[Z:.*]]: vector<16xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant dense<1.000000e+00>
// CHECK-DAG: %[[C1:.*]] = arith.constant dense<2.000000e+00>
// CHECK-DAG: %[[C2:.*]] = arith.constant dense<3.000000e+00>
// CHECK-DAG: %[[C3:.*]] = arith.constant dense<4.000000e+00>
// CHECK: %[[S1:.*]] = math.fma %[[C0]], %[[Z]], %[[C1]] : vector<16xf32>
// CHECK: %[[S2:.*]] = math.fma %[[S1]], %[[Z]], %[[C2]] : vector<16xf32>
// CHECK: %[[S3:.*]] = math.fma %[[Z]], %[[S2]], %[[C3]] : vector<16xf32>
// CHECK-NOT: arith.mulf
// CHECK-NOT: arith.addf
// CHECK: return %[[S3]]
func.func @horner(%z: vector<16xf32>) -> vector<16xf32> {
  %c0 = arith.constant dense<1.0> : vector<16xf32>
  %c1 = arith.constant dense<2.0> : vector<16xf32>
  %c2 = arith.constant dense<3.0> : vector<16xf32>
  %c3 = arith.constant dense<4.0> : vector<16xf32>
  %m1 = arith.mulf %c0, %z : vector<16xf32>
  %s1 = arith.addf %m1, %c1 : vector<16xf32>
  %m2 = arith.mulf %s1, %z : vector<16xf32>
  %s2 = arith.addf %m2, %c2 : vector<16xf32>
  %m3 = arith.mulf %z, %s2 : vector<16xf32>
  %s3 = arith.addf %c3, %m3 : vector<16xf32>
  return %s3 : vector<16xf32>
}

// -----

/// Merged branches' coefficients (a select of two constants) are coefficients too.
// CHECK-LABEL: func.func @selected_coefficients
// CHECK-COUNT-3: math.fma
// CHECK-NOT: arith.addf
func.func @selected_coefficients(%z: f32, %c: i1) -> f32 {
  %a = arith.constant 1.0 : f32
  %b = arith.constant 2.0 : f32
  %s = arith.select %c, %a, %b : f32
  %m1 = arith.mulf %a, %z : f32
  %s1 = arith.addf %m1, %s : f32
  %m2 = arith.mulf %s1, %z : f32
  %s2 = arith.addf %m2, %s : f32
  %m3 = arith.mulf %s2, %z : f32
  %s3 = arith.addf %m3, %b : f32
  return %s3 : f32
}

// -----

/// jnp.polyval's Horner loop: coefficients read from memory, each broadcast
/// from one scalar (a 0-d read, or vector.broadcast), are coefficients too.
// CHECK-LABEL: func.func @broadcast_coefficients
// CHECK-COUNT-3: math.fma
// CHECK-NOT: arith.mulf
// CHECK-NOT: arith.addf
func.func @broadcast_coefficients(%x: vector<8xf32>, %acc: vector<8xf32>, %c: memref<f32>, %d: f32) -> vector<8xf32> {
  %pad = arith.constant 0.0 : f32
  %c0 = vector.transfer_read %c[], %pad {in_bounds = [true], permutation_map = affine_map<() -> (0)>} : memref<f32>, vector<8xf32>
  %c1 = vector.broadcast %d : f32 to vector<8xf32>
  %m1 = arith.mulf %acc, %x : vector<8xf32>
  %s1 = arith.addf %m1, %c0 : vector<8xf32>
  %m2 = arith.mulf %s1, %x : vector<8xf32>
  %s2 = arith.addf %m2, %c1 : vector<8xf32>
  %m3 = arith.mulf %s2, %x : vector<8xf32>
  %s3 = arith.addf %m3, %c0 : vector<8xf32>
  return %s3 : vector<8xf32>
}

// -----

/// An elementwise recurrence `h * a + x` whose `x` is read lane by lane (or
/// broadcast from a vector) adds no coefficient: left as it is.
// CHECK-LABEL: func.func @elementwise_addends
// CHECK-NOT: math.fma
func.func @elementwise_addends(%a: vector<8xf32>, %h: vector<8xf32>, %m: memref<8xf32>, %v: vector<8xf32>) -> vector<8xf32> {
  %pad = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %x = vector.transfer_read %m[%c0], %pad {in_bounds = [true]} : memref<8xf32>, vector<8xf32>
  %y = vector.broadcast %v : vector<8xf32> to vector<8xf32>
  %m1 = arith.mulf %h, %a : vector<8xf32>
  %s1 = arith.addf %m1, %x : vector<8xf32>
  %m2 = arith.mulf %s1, %a : vector<8xf32>
  %s2 = arith.addf %m2, %y : vector<8xf32>
  %m3 = arith.mulf %s2, %a : vector<8xf32>
  %s3 = arith.addf %m3, %x : vector<8xf32>
  return %s3 : vector<8xf32>
}

// -----

/// Two steps are no polynomial approximation; a recurrence `h * a + x` adds no
/// constant; a product used twice is kept; f64 is left alone: all stay as they are.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: math.fma
func.func @left_alone(%z: f32, %x: f32, %d: f64) -> (f32, f32, f32, f64) {
  %c = arith.constant 2.0 : f32
  %m1 = arith.mulf %c, %z : f32
  %s1 = arith.addf %m1, %c : f32
  %m2 = arith.mulf %s1, %z : f32
  %s2 = arith.addf %m2, %c : f32
  %h1 = arith.mulf %z, %c : f32
  %r1 = arith.addf %h1, %x : f32
  %h2 = arith.mulf %r1, %c : f32
  %r2 = arith.addf %h2, %x : f32
  %h3 = arith.mulf %r2, %c : f32
  %r3 = arith.addf %h3, %x : f32
  %u = arith.mulf %s2, %z : f32
  %t1 = arith.addf %u, %c : f32
  %t2 = arith.addf %u, %t1 : f32
  %dc = arith.constant 2.0 : f64
  %d1 = arith.mulf %d, %d : f64
  %e1 = arith.addf %d1, %dc : f64
  %d2 = arith.mulf %e1, %d : f64
  %e2 = arith.addf %d2, %dc : f64
  %d3 = arith.mulf %e2, %d : f64
  %e3 = arith.addf %d3, %dc : f64
  return %s2, %r3, %t2, %e3 : f32, f32, f32, f64
}
