// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-profile-kernels)' | FileCheck %s

/// Each op that does work gets a clock call before and after it, with its id;
/// allocations and views do not; the kernels' names are listed on the module.
// CHECK: module attributes {xla.profile_kernels = ["{{.*}}:23:3 scf.for", "{{.*}}:27:3 memref.copy"]}
// CHECK-LABEL: func.func @main
// CHECK: memref.alloc
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @xlac_profile_enter(%[[C0]])
// CHECK-NEXT: scf.for
// CHECK: call @xlac_profile_exit(%[[C0]])
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @xlac_profile_enter(%[[C1]])
// CHECK-NEXT: memref.copy
// CHECK-NEXT: call @xlac_profile_exit(%[[C1]])
// CHECK: func.func private @xlac_profile_enter(i64)
// CHECK: func.func private @xlac_profile_exit(i64)
func.func @main(%a: memref<8xf32>, %out: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
  }
  memref.copy %t, %out : memref<8xf32> to memref<8xf32>
  return
}
