// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-inline-schedule-calls)' --mlir-print-debuginfo | FileCheck %s

/// A kernel function called for two layers: a copy of its body at each call,
/// each copy located at its own call; the function is gone. A call of any
/// other function stays.
// CHECK-LABEL: func.func @main
// CHECK-NOT: call @xla_scheduled_0
// CHECK: scf.for
// CHECK: math.exp {{.*}} loc(#[[FIRST:.*]])
// CHECK: scf.for
// CHECK: math.exp {{.*}} loc(#[[SECOND:.*]])
// CHECK: call @helper(
// CHECK-NOT: func.func private @xla_scheduled_0
// CHECK: func.func private @helper
// CHECK-DAG: #[[FIRST]] = loc("layers.mlir":10:3)
// CHECK-DAG: #[[SECOND]] = loc("layers.mlir":20:3)
func.func @main(%a: memref<8xf32>, %t: memref<8xf32>, %out: memref<8xf32>) {
  call @xla_scheduled_0(%t, %a) : (memref<8xf32>, memref<8xf32>) -> () loc("layers.mlir":10:3)
  call @xla_scheduled_0(%out, %t) : (memref<8xf32>, memref<8xf32>) -> () loc("layers.mlir":20:3)
  call @helper(%out) : (memref<8xf32>) -> ()
  return
}

func.func private @xla_scheduled_0(%dest: memref<8xf32>, %src: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %src[%i] : memref<8xf32>
    %y = math.exp %x : f32 loc("kernel.mlir":2:5)
    memref.store %y, %dest[%i] : memref<8xf32>
  }
  return
}

func.func private @helper(%x: memref<8xf32>) {
  return
}
