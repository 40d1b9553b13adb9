// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-wrap-host-code)' --split-input-file | FileCheck %s

/// A full reduction's scalar loop becomes the body of a one-trip scf.parallel.
// CHECK-LABEL: func.func @full_sum
// CHECK-SAME: (%[[IN:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<f32>)
// CHECK: arith.constant 0.0
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%[[ZERO]]) to (%[[ONE]]) step (%[[ONE]])
// CHECK: memref.store
// CHECK: scf.for
// CHECK: memref.load %[[IN]]
// CHECK: scf.reduce
// CHECK: return
func.func @full_sum(%in: memref<8xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %out[] : memref<f32>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %in[%i] : memref<8xf32>
    %acc = memref.load %out[] : memref<f32>
    %sum = arith.addf %acc, %x : f32
    memref.store %sum, %out[] : memref<f32>
  }
  return
}

// -----

/// Host ops and tile-size arithmetic on constants stay where they are.
// CHECK-LABEL: func.func @parallel_only
// CHECK: %[[STEP:.*]] = arith.muli
// CHECK: memref.alloc
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[STEP]])
// CHECK-NOT: scf.parallel
func.func @parallel_only(%out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %step = arith.muli %c1, %c16 : index
  %tmp = memref.alloc() : memref<16xf32>
  scf.parallel (%i) = (%c0) to (%c16) step (%step) {
    %one = arith.constant 1.0 : f32
    memref.store %one, %out[%i] : memref<16xf32>
    scf.reduce
  }
  return
}

// -----

/// A clamped index loaded on the host is recomputed inside the loop that uses it.
// CHECK-LABEL: func.func @clamped_index
// CHECK-SAME: (%[[IN:.*]]: memref<3xf32>, %[[AT:.*]]: memref<i64>, %[[OUT:.*]]: memref<1xf32>)
// CHECK-NOT: memref.load
// CHECK: scf.parallel
// CHECK-NEXT: %[[I:.*]] = memref.load %[[AT]][]
// CHECK-NEXT: %[[X:.*]] = arith.index_cast %[[I]]
// CHECK-NEXT: %[[C:.*]] = arith.minsi %[[X]]
// CHECK-NEXT: memref.subview %[[IN]][%[[C]]]
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @clamped_index(%in: memref<3xf32>, %at: memref<i64>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %i = memref.load %at[] : memref<i64>
  %x = arith.index_cast %i : i64 to index
  %c = arith.minsi %x, %c2 : index
  %view = memref.subview %in[%c] [1] [1] : memref<3xf32> to memref<1xf32, strided<[1], offset: ?>>
  scf.parallel (%j) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %view[%j] : memref<1xf32, strided<[1], offset: ?>>
    memref.store %v, %out[%j] : memref<1xf32>
    scf.reduce
  }
  return
}
