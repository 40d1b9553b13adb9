// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-saturate-float-to-int)' --split-input-file | FileCheck %s

/// A signed conversion clamps to [min, max] and maps NaN to 0.
// CHECK-LABEL: func.func @signed
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[RAW:.*]] = arith.fptosi %[[X]] : f32 to i32
// CHECK: %[[HIGH:.*]] = arith.constant 2.14748365E+9 : f32
// CHECK: %[[BIG:.*]] = arith.cmpf oge, %[[X]], %[[HIGH]]
// CHECK: %[[LOW:.*]] = arith.constant -2.14748365E+9 : f32
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[X]], %[[LOW]]
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]]
// CHECK: %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK: %[[S1:.*]] = arith.select %[[BIG]], %[[MAX]], %[[RAW]]
// CHECK: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: %[[S2:.*]] = arith.select %[[SMALL]], %[[MIN]], %[[S1]]
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[S3:.*]] = arith.select %[[NAN]], %[[ZERO]], %[[S2]]
// CHECK: return %[[S3]]
func.func @signed(%x: f32) -> i32 {
  %0 = arith.fptosi %x : f32 to i32
  return %0 : i32
}

// -----

/// An unsigned conversion clamps negatives to 0 and large values to all ones.
// CHECK-LABEL: func.func @unsigned
// CHECK: arith.fptoui
// CHECK: arith.constant 2.560000e+02 : f32
// CHECK: arith.cmpf olt
// CHECK: arith.constant -1 : i8
// CHECK: return
func.func @unsigned(%x: f32) -> i8 {
  %0 = arith.fptoui %x : f32 to i8
  return %0 : i8
}
