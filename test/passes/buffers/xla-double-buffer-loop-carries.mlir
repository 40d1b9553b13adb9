// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-double-buffer-loop-carries)' --split-input-file | FileCheck %s

/// fori_loop with a small body inlined: buffer-loop-hoisting took the body's
/// buffer out of the loop, so the condition copied the carry each trip. Now the
/// copy goes and the body writes the one of two buffers its carry is not.
// CHECK-LABEL: func.func @hoisted
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: scf.while (%[[I:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}})
// CHECK-NOT: memref.copy
// CHECK: scf.condition(%{{.*}}) %[[I]], %[[C]] : i32, memref<64xf32>
// CHECK: ^bb0(%{{.*}}: i32, %[[X:.*]]: memref<64xf32>):
// CHECK: %[[PX:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[PX]], %[[PA]]
// CHECK: %[[O:.*]] = arith.select %[[SAME]], %[[B]], %[[A]]
// CHECK: outs(%[[O]] : memref<64xf32>)
// CHECK: scf.yield %{{.*}}, %[[O]]
func.func @hoisted(%init: memref<64xf32>, %n: i32) -> memref<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %A = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  %r:2 = scf.while (%i = %c0, %a = %init) : (i32, memref<64xf32>) -> (i32, memref<64xf32>) {
    %p = arith.cmpi slt, %i, %n : i32
    %fresh = memref.alloc() : memref<64xf32>
    memref.copy %a, %fresh : memref<64xf32> to memref<64xf32>
    scf.condition(%p) %i, %fresh : i32, memref<64xf32>
  } do {
  ^bb0(%i: i32, %b: memref<64xf32>):
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%b : memref<64xf32>) outs(%A : memref<64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %x : f32
      linalg.yield %m : f32
    }
    %j = arith.addi %i, %c1 : i32
    scf.yield %j, %A : i32, memref<64xf32>
  }
  return %r#1 : memref<64xf32>
}

// -----

/// A kernel call's out-param allocated each trip (the carry handed over
/// already): the alloc moves before the loop and gets a twin.
// CHECK-LABEL: func.func @fresh
// CHECK: %[[A:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<64xf32>
// CHECK: scf.while
// CHECK: } do {
// CHECK-NOT: memref.alloc
// CHECK: %[[O:.*]] = arith.select %{{.*}}, %[[B]], %[[A]]
// CHECK: func.call @kernel(%{{.*}}, %[[O]])
// CHECK: scf.yield %{{.*}}, %[[O]]
func.func private @kernel(%in: memref<64xf32>, %out: memref<64xf32>) {
  memref.copy %in, %out : memref<64xf32> to memref<64xf32>
  return
}
func.func @fresh(%init: memref<64xf32>, %n: i32) -> memref<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%i = %c0, %a = %init) : (i32, memref<64xf32>) -> (i32, memref<64xf32>) {
    %p = arith.cmpi slt, %i, %n : i32
    scf.condition(%p) %i, %a : i32, memref<64xf32>
  } do {
  ^bb0(%i: i32, %b: memref<64xf32>):
    %o = memref.alloc() : memref<64xf32>
    func.call @kernel(%b, %o) : (memref<64xf32>, memref<64xf32>) -> ()
    %j = arith.addi %i, %c1 : i32
    scf.yield %j, %o : i32, memref<64xf32>
  }
  return %r#1 : memref<64xf32>
}

// -----

/// The inner loop's buffer was hoisted out of the outer loop too: both buffers
/// go next to the inner loop (one pair per outer trip), so the inner loop's
/// result an outer trip keeps is not written over by the next inner loop.
// CHECK-LABEL: func.func @nested
// CHECK: scf.while
// CHECK: } do {
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: scf.while
// CHECK: arith.select %{{.*}}, %[[B]], %[[A]]
func.func @nested(%init: memref<8xf32>, %n: i32) -> memref<8xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %A = memref.alloc() : memref<8xf32>
  %r:2 = scf.while (%i = %c0, %a = %init) : (i32, memref<8xf32>) -> (i32, memref<8xf32>) {
    %p = arith.cmpi slt, %i, %n : i32
    scf.condition(%p) %i, %a : i32, memref<8xf32>
  } do {
  ^bb0(%i: i32, %b: memref<8xf32>):
    %s:2 = scf.while (%k = %c0, %x = %b) : (i32, memref<8xf32>) -> (i32, memref<8xf32>) {
      %q = arith.cmpi slt, %k, %n : i32
      %fresh = memref.alloc() : memref<8xf32>
      memref.copy %x, %fresh : memref<8xf32> to memref<8xf32>
      scf.condition(%q) %k, %fresh : i32, memref<8xf32>
    } do {
    ^bb0(%k: i32, %y: memref<8xf32>):
      memref.copy %y, %A : memref<8xf32> to memref<8xf32>
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1, %A : i32, memref<8xf32>
    }
    %j = arith.addi %i, %c1 : i32
    scf.yield %j, %s#1 : i32, memref<8xf32>
  }
  return %r#1 : memref<8xf32>
}

// -----

/// The buffer is read after the loop (its last content expected there): left alone.
// CHECK-LABEL: func.func @read_after
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<64xf32> to memref<64xf32>
// CHECK: scf.condition
// CHECK-NOT: arith.select
func.func @read_after(%init: memref<64xf32>, %n: i32) -> (memref<64xf32>, f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant 0 : index
  %A = memref.alloc() : memref<64xf32>
  %r:2 = scf.while (%i = %c0, %a = %init) : (i32, memref<64xf32>) -> (i32, memref<64xf32>) {
    %p = arith.cmpi slt, %i, %n : i32
    %fresh = memref.alloc() : memref<64xf32>
    memref.copy %a, %fresh : memref<64xf32> to memref<64xf32>
    scf.condition(%p) %i, %fresh : i32, memref<64xf32>
  } do {
  ^bb0(%i: i32, %b: memref<64xf32>):
    memref.copy %b, %A : memref<64xf32> to memref<64xf32>
    %j = arith.addi %i, %c1 : i32
    scf.yield %j, %A : i32, memref<64xf32>
  }
  %v = memref.load %A[%z] : memref<64xf32>
  return %r#1, %v : memref<64xf32>, f32
}

// -----

/// The carry also passes to another position (the pair swapped each trip):
/// the body's write would land on a buffer still carried. Left alone.
// CHECK-LABEL: func.func @swapped
// CHECK-NOT: arith.select
func.func @swapped(%init: memref<8xf32>, %n: i32) -> (memref<8xf32>, memref<8xf32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:3 = scf.while (%i = %c0, %a = %init, %c = %init) : (i32, memref<8xf32>, memref<8xf32>) -> (i32, memref<8xf32>, memref<8xf32>) {
    %p = arith.cmpi slt, %i, %n : i32
    scf.condition(%p) %i, %a, %c : i32, memref<8xf32>, memref<8xf32>
  } do {
  ^bb0(%i: i32, %b: memref<8xf32>, %d: memref<8xf32>):
    %o = memref.alloc() : memref<8xf32>
    memref.copy %d, %o : memref<8xf32> to memref<8xf32>
    %j = arith.addi %i, %c1 : i32
    scf.yield %j, %o, %b : i32, memref<8xf32>, memref<8xf32>
  }
  return %r#1, %r#2 : memref<8xf32>, memref<8xf32>
}

// -----

/// A carry kept in the before region only (the flag the condition reads, as
/// jax's continued fractions in betainc/igamma): the condition's and the after
/// region's positions are one behind the carries' and the yield's. The copy of
/// the carry after it still goes, and its buffer still alternates.
// CHECK-LABEL: func.func @shifted
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[C:.*]] = %{{.*}})
// CHECK-NOT: memref.copy
// CHECK: scf.condition(%{{.*}}) %{{.*}}, %[[C]] : i32, memref<64xf32>
// CHECK: ^bb0(%{{.*}}: i32, %[[X:.*]]: memref<64xf32>):
// CHECK: %[[PX:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[PX]], %[[PA]]
// CHECK: %[[O:.*]] = arith.select %[[SAME]], %[[B]], %[[A]]
// CHECK: outs(%[[O]] : memref<64xf32>)
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[O]]
func.func @shifted(%init: memref<64xf32>, %n: i32) -> memref<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %true = arith.constant true
  %A = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  %r:2 = scf.while (%i = %c0, %go = %true, %a = %init) : (i32, i1, memref<64xf32>) -> (i32, memref<64xf32>) {
    %lt = arith.cmpi slt, %i, %n : i32
    %p = arith.andi %lt, %go : i1
    %fresh = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    memref.copy %a, %fresh : memref<64xf32> to memref<64xf32>
    scf.condition(%p) %i, %fresh : i32, memref<64xf32>
  } do {
  ^bb0(%i: i32, %b: memref<64xf32>):
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%b : memref<64xf32>) outs(%A : memref<64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %x : f32
      linalg.yield %m : f32
    }
    %j = arith.addi %i, %c1 : i32
    %more = arith.cmpi slt, %j, %n : i32
    scf.yield %j, %more, %A : i32, i1, memref<64xf32>
  }
  return %r#1 : memref<64xf32>
}
