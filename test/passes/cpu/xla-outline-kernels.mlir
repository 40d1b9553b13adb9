// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outline-kernels)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outline-kernels{dedupe=false})' --split-input-file | FileCheck %s --check-prefix=APART

/// Each loop nest becomes a call of a kernel function; two kernels that are
/// the same op for op (the same loop on other buffers) share one function.
/// Constants and views are copied in, buffers passed; allocations stay.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK: call @xla_kernel_0(%[[A]], %[[T]]) {no_inline} : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK-NEXT: call @xla_kernel_0(%[[B]], %[[OUT]]) {no_inline}
// CHECK: call @xla_kernel_1(%[[T]], %[[OUT]]) {no_inline} : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: return
// CHECK: func.func private @xla_kernel_0(%[[X:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>) attributes {llvm.no_inline}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 8 : index
// CHECK: scf.for
// CHECK: math.exp
// CHECK: func.func private @xla_kernel_1(
// CHECK: memref.subview {{.*}}[4] [4] [1]
// CHECK: memref.copy
// CHECK-NOT: func.func private @xla_kernel_2
// APART-LABEL: func.func @main
// APART: call @xla_kernel_0(
// APART: call @xla_kernel_1(
// APART: call @xla_kernel_2(
// APART: func.func private @xla_kernel_2
func.func @main(%a: memref<8xf32>, %b: memref<8xf32>, %out: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %b[%i] : memref<8xf32>
    %e = math.exp %v : f32
    memref.store %e, %out[%i] : memref<8xf32>
  }
  %head = memref.subview %t[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %tail = memref.subview %out[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  memref.copy %head, %tail : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1], offset: 4>>
  memref.dealloc %t : memref<8xf32>
  return
}

// -----

/// A loop whose result a later op stores is one kernel with that store; the
/// allocation between them stays in the caller, before the call.
// CHECK-LABEL: func.func @tile
// CHECK: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: call @xla_kernel_0(%{{.*}}, %[[T]])
// CHECK: func.func private @xla_kernel_0
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.transfer_write
func.func @tile(%a: memref<8x4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %pad = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (vector<4xf32>) {
    %row = vector.transfer_read %a[%i, %c0], %pad {in_bounds = [true]} : memref<8x4xf32>, vector<4xf32>
    %next = arith.addf %acc, %row : vector<4xf32>
    scf.yield %next : vector<4xf32>
  }
  %t = memref.alloc() : memref<4xf32>
  vector.transfer_write %sum, %t[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

/// Results that escape to an op that is no kernel (a store into a buffer the
/// caller reads) keep the loop in place, and so does a kernel that frees a
/// buffer from outside (it would be passed the aligned pointer, not
/// malloc's). A view of dynamic offset is made inside the kernel from the
/// buffer and the offset (it has no bare-pointer form of its own).
// CHECK-LABEL: func.func @stays
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[N:.*]]: index, %[[OUT:.*]]: memref<8xf32>, %{{.*}}: i1)
// CHECK: scf.for
// CHECK: memref.store
// CHECK: call @xla_kernel_0(%[[A]], %[[N]], %[[OUT]])
// CHECK: scf.if
// CHECK-NEXT: memref.dealloc
// CHECK: func.func private @xla_kernel_0(%[[KA:.*]]: memref<8xf32>, %[[KN:.*]]: index, %{{.*}}: memref<8xf32>)
// CHECK: memref.subview %[[KA]][%[[KN]]] [2] [1]
// CHECK: linalg.copy
// CHECK-NOT: call @xla_kernel
func.func @stays(%a: memref<8xf32>, %n: index, %out: memref<8xf32>, %owned: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %pad) -> (f32) {
    %v = memref.load %a[%i] : memref<8xf32>
    %next = arith.addf %acc, %v : f32
    scf.yield %next : f32
  }
  memref.store %sum, %out[%c0] : memref<8xf32>
  %view = memref.subview %a[%n] [2] [1] : memref<8xf32> to memref<2xf32, strided<[1], offset: ?>>
  %dest = memref.subview %out[2] [2] [1] : memref<8xf32> to memref<2xf32, strided<[1], offset: 2>>
  linalg.copy ins(%view : memref<2xf32, strided<[1], offset: ?>>) outs(%dest : memref<2xf32, strided<[1], offset: 2>>)
  %t = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  scf.if %owned {
    memref.dealloc %t : memref<4xf32>
  }
  return
}
