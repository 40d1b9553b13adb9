// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-hand-over-loop-carries)' --split-input-file | FileCheck %s

/// fori_loop over a vector: the body's kernel reads the carry and writes a
/// fresh buffer; the condition hands the carry over without a copy.
// CHECK-LABEL: func.func @fori
// CHECK: scf.while (%[[I:.*]] = %{{.*}}, %[[A:.*]] = %{{.*}})
// CHECK-NOT: memref.copy
// CHECK: scf.condition(%{{.*}}) %[[I]], %[[A]] : i32, memref<64xf32>
// CHECK: memref.alloc
// CHECK: func.call @kernel
func.func private @kernel(%in: memref<64xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%in : memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  }
  return
}
func.func @fori(%init: memref<64xf32>, %n: i32) -> memref<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%i = %c0, %a = %init) : (i32, memref<64xf32>) -> (i32, memref<64xf32>) {
    %p = arith.cmpi slt, %i, %n : i32
    %fresh = memref.alloc() : memref<64xf32>
    memref.copy %a, %fresh : memref<64xf32> to memref<64xf32>
    scf.condition(%p) %i, %fresh : i32, memref<64xf32>
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

/// The body writes into its carry (a kernel's out operand): the copy stays.
// CHECK-LABEL: func.func @written
// CHECK: memref.copy
// CHECK: scf.condition
func.func private @kernel(%in: memref<64xf32>, %out: memref<64xf32>) {
  memref.copy %in, %out : memref<64xf32> to memref<64xf32>
  return
}
func.func @written(%init: memref<64xf32>, %n: i32) -> memref<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%i = %c0, %a = %init) : (i32, memref<64xf32>) -> (i32, memref<64xf32>) {
    %p = arith.cmpi slt, %i, %n : i32
    %fresh = memref.alloc() : memref<64xf32>
    memref.copy %a, %fresh : memref<64xf32> to memref<64xf32>
    scf.condition(%p) %i, %fresh : i32, memref<64xf32>
  } do {
  ^bb0(%i: i32, %b: memref<64xf32>):
    %o = memref.alloc() : memref<64xf32>
    func.call @kernel(%o, %b) : (memref<64xf32>, memref<64xf32>) -> ()
    %j = arith.addi %i, %c1 : i32
    scf.yield %j, %o : i32, memref<64xf32>
  }
  return %r#1 : memref<64xf32>
}

// -----

/// Two carries yield the same fresh buffer: neither is handed over.
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-2: memref.copy
// CHECK: scf.condition
func.func @shared(%x: memref<64xf32>, %y: memref<64xf32>, %n: i1) -> (memref<64xf32>, memref<64xf32>) {
  %r:2 = scf.while (%a = %x, %b = %y) : (memref<64xf32>, memref<64xf32>) -> (memref<64xf32>, memref<64xf32>) {
    %fa = memref.alloc() : memref<64xf32>
    memref.copy %a, %fa : memref<64xf32> to memref<64xf32>
    %fb = memref.alloc() : memref<64xf32>
    memref.copy %b, %fb : memref<64xf32> to memref<64xf32>
    scf.condition(%n) %fa, %fb : memref<64xf32>, memref<64xf32>
  } do {
  ^bb0(%a: memref<64xf32>, %b: memref<64xf32>):
    %o = memref.alloc() : memref<64xf32>
    memref.copy %a, %o : memref<64xf32> to memref<64xf32>
    scf.yield %o, %o : memref<64xf32>, memref<64xf32>
  }
  return %r#0, %r#1 : memref<64xf32>, memref<64xf32>
}

// -----

/// A scan's new carry: its 1 x 64 row reshaped to 64, the whole buffer: handed over.
// CHECK-LABEL: func.func @row
// CHECK: scf.while (%[[A:.*]] = %{{.*}})
// CHECK-NOT: memref.copy
// CHECK: scf.condition(%{{.*}}) %[[A]] : memref<64xf32>
func.func @row(%init: memref<64xf32>, %n: i1) -> memref<64xf32> {
  %r = scf.while (%a = %init) : (memref<64xf32>) -> memref<64xf32> {
    %fresh = memref.alloc() : memref<64xf32>
    memref.copy %a, %fresh : memref<64xf32> to memref<64xf32>
    scf.condition(%n) %fresh : memref<64xf32>
  } do {
  ^bb0(%b: memref<64xf32>):
    %row = memref.alloc() : memref<1x64xf32>
    %e = memref.expand_shape %b [[0, 1]] output_shape [1, 64] : memref<64xf32> into memref<1x64xf32>
    memref.copy %e, %row : memref<1x64xf32> to memref<1x64xf32>
    %c = memref.collapse_shape %row [[0, 1]] : memref<1x64xf32> into memref<64xf32>
    scf.yield %c : memref<64xf32>
  }
  return %r : memref<64xf32>
}
