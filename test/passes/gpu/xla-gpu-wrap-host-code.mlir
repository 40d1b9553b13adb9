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

// -----

/// Host control flow stays on the host: the scalar work in its regions becomes
/// kernels there, and the load of the predicate it branches on stays a read-back.
// CHECK-LABEL: func.func @while_on_device
// CHECK: scf.while
// CHECK: scf.parallel
// CHECK: arith.cmpi slt
// CHECK-NEXT: memref.store
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: %[[P:.*]] = memref.load %{{.*}}[] : memref<i1>
// CHECK-NEXT: scf.condition(%[[P]])
// CHECK: do
// CHECK: scf.parallel
// CHECK: arith.addi
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield
func.func @while_on_device(%n: memref<i32>, %out: memref<i32>) {
  %c1 = arith.constant 1 : i32
  %p0 = memref.alloc() : memref<i1>
  %r = scf.while (%i = %out) : (memref<i32>) -> memref<i32> {
    %a = memref.load %i[] : memref<i32>
    %b = memref.load %n[] : memref<i32>
    %lt = arith.cmpi slt, %a, %b : i32
    memref.store %lt, %p0[] : memref<i1>
    %p = memref.load %p0[] : memref<i1>
    scf.condition(%p) %i : memref<i32>
  } do {
  ^bb0(%i: memref<i32>):
    %a = memref.load %i[] : memref<i32>
    %s = arith.addi %a, %c1 : i32
    memref.store %s, %i[] : memref<i32>
    scf.yield %i : memref<i32>
  }
  return
}

// -----

/// A predicate computed from loaded values (no buffer holds it) is stored by the
/// device into a buffer of its own, and loaded back by the host where it branches.
// CHECK-LABEL: func.func @computed_predicate
// CHECK: %[[SLOT:.*]] = memref.alloc() : memref<i1>
// CHECK: scf.parallel
// CHECK: %[[P:.*]] = arith.cmpf olt
// CHECK-NEXT: memref.store %[[P]], %[[SLOT]][]
// CHECK: %[[READ:.*]] = memref.load %[[SLOT]][] : memref<i1>
// CHECK-NEXT: scf.if %[[READ]] -> (memref<2xf32>)
func.func @computed_predicate(%x: memref<f32>, %a: memref<2xf32>, %b: memref<2xf32>) -> memref<2xf32> {
  %zero = arith.constant 0.0 : f32
  %v = memref.load %x[] : memref<f32>
  %p = arith.cmpf olt, %v, %zero : f32
  %r = scf.if %p -> memref<2xf32> {
    scf.yield %a : memref<2xf32>
  } else {
    scf.yield %b : memref<2xf32>
  }
  return %r : memref<2xf32>
}

// -----

/// A scalar loop's buffer read by the next scalar loop (top_k's, with no batch
/// dimension), buffers made between them: one kernel, the buffers made before it.
// CHECK-LABEL: func.func @scalar_loops
// CHECK: memref.alloc() : memref<3xi32>
// CHECK-NEXT: memref.alloc() : memref<3xi32>
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
func.func @scalar_loops(%in: memref<3xi32>, %out: memref<3xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %seed = memref.alloc() : memref<3xi32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %seed) -> (memref<3xi32>) {
    %v = memref.load %in[%i] : memref<3xi32>
    memref.store %v, %acc[%i] : memref<3xi32>
    scf.yield %acc : memref<3xi32>
  }
  %tmp = memref.alloc() : memref<3xi32>
  %tmp2 = memref.alloc() : memref<3xi32>
  scf.for %i = %c0 to %c3 step %c1 {
    %v = memref.load %r[%i] : memref<3xi32>
    memref.store %v, %out[%i] : memref<3xi32>
  }
  return
}

// -----

/// A view of a view at a computed offset moves into the kernel with it.
// CHECK-LABEL: func.func @view_of_offset_view
// CHECK-SAME: (%[[IN:.*]]: memref<5xi32>, %[[AT:.*]]: memref<i64>, %[[OUT:.*]]: memref<i32>)
// CHECK-NOT: memref.collapse_shape
// CHECK: scf.parallel
// CHECK: memref.load %[[AT]][]
// CHECK: %[[SLICE:.*]] = memref.subview %[[IN]]
// CHECK: %[[ONE:.*]] = memref.collapse_shape %[[SLICE]]
// CHECK: memref.load %[[ONE]][]
func.func @view_of_offset_view(%in: memref<5xi32>, %at: memref<i64>, %out: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i = memref.load %at[] : memref<i64>
  %x = arith.index_cast %i : i64 to index
  %slice = memref.subview %in[%x] [1] [1] : memref<5xi32> to memref<1xi32, strided<[1], offset: ?>>
  %one = memref.collapse_shape %slice [] : memref<1xi32, strided<[1], offset: ?>> into memref<i32, strided<[], offset: ?>>
  scf.parallel (%j) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %one[] : memref<i32, strided<[], offset: ?>>
    memref.store %v, %out[] : memref<i32>
    scf.reduce
  }
  return
}

// -----

/// A predicate loaded in the block around the branch that uses it (CSE shared one
/// load) is read back there.
// CHECK-LABEL: func.func @predicate_from_around
// CHECK: %[[P:.*]] = memref.load %{{.*}}[] : memref<i1>
// CHECK-NEXT: scf.while
// CHECK: scf.if %[[P]]
// CHECK-NOT: memref.store
func.func @predicate_from_around(%flag: memref<i1>, %a: memref<2xf32>, %b: memref<2xf32>) -> memref<2xf32> {
  %p = memref.load %flag[] : memref<i1>
  %r = scf.while (%x = %a) : (memref<2xf32>) -> memref<2xf32> {
    %y = scf.if %p -> memref<2xf32> {
      scf.yield %b : memref<2xf32>
    } else {
      scf.yield %x : memref<2xf32>
    }
    scf.condition(%p) %y : memref<2xf32>
  } do {
  ^bb0(%x: memref<2xf32>):
    scf.yield %x : memref<2xf32>
  }
  return %r : memref<2xf32>
}
