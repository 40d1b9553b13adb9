// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-own-launch-constants)' | FileCheck %s

/// Two launches read one constant from outside: each gets a copy right
/// before it; a constant already inside and the launch's own operands stay.
// CHECK-LABEL: func.func @two_launches
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2.0{{.*}}e+00 : f32
// CHECK-NEXT: %[[OWN1:.*]] = arith.constant 2.0{{.*}}e+00 : f32
// CHECK-NEXT: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C1]], {{.*}} = %[[C1]], {{.*}} = %[[C1]])
// CHECK: memref.store %[[OWN1]]
// CHECK: %[[OWN2:.*]] = arith.constant 2.0{{.*}}e+00 : f32
// CHECK-NEXT: gpu.launch blocks
// CHECK: %[[INNER:.*]] = arith.constant 3.0{{.*}}e+00 : f32
// CHECK-NEXT: memref.store %[[OWN2]]
// CHECK-NEXT: memref.store %[[INNER]]
func.func @two_launches(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %two, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %three = arith.constant 3.0 : f32
    memref.store %two, %m[%tx] : memref<4xf32>
    memref.store %three, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
