// RUN: xla-opt %s --split-input-file --pass-pipeline='builtin.module(xla-gpu-inline-helpers)' | FileCheck %s

/// A helper called once has its ops moved before the call; one called twice is
/// cloned per call; a helper's own helper (a kernel and its _body) is inlined in
/// the next round. No helper is left, and the public function stays.
// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[M:.*]]: memref<4xf32>, %[[X:.*]]: f32)
// CHECK-NOT: call
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.store %[[X]], %[[M]][%[[C0]]]
// CHECK: %[[S1:.*]] = arith.addf %[[X]], %[[X]]
// CHECK: memref.store %[[S1]], %[[M]]
// CHECK: %[[S2:.*]] = arith.addf %[[X]], %[[X]]
// CHECK: memref.store %[[S2]], %[[M]]
// CHECK: %[[N:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT: return %[[N]]
// CHECK-NOT: func.func private @xla_gpu_kernel
func.func @host(%m: memref<4xf32>, %x: f32) -> f32 {
  call @xla_gpu_kernel_0(%m, %x) : (memref<4xf32>, f32) -> ()
  call @xla_gpu_kernel_1(%m, %x) : (memref<4xf32>, f32) -> ()
  call @xla_gpu_kernel_1(%m, %x) : (memref<4xf32>, f32) -> ()
  %n = call @xla_gpu_kernel_2(%x) : (f32) -> f32
  return %n : f32
}
func.func private @xla_gpu_kernel_0(%m: memref<4xf32>, %x: f32) {
  call @xla_gpu_kernel_0_body(%m, %x) : (memref<4xf32>, f32) -> ()
  return
}
func.func private @xla_gpu_kernel_0_body(%m: memref<4xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  memref.store %x, %m[%c0] : memref<4xf32>
  return
}
func.func private @xla_gpu_kernel_1(%m: memref<4xf32>, %x: f32) {
  %c1 = arith.constant 1 : index
  %s = arith.addf %x, %x : f32
  memref.store %s, %m[%c1] : memref<4xf32>
  return
}
func.func private @xla_gpu_kernel_2(%x: f32) -> f32 {
  %n = arith.mulf %x, %x : f32
  return %n : f32
}

// -----

/// A recursive helper (StableHLO has none) stays a function, and its calls calls.
// CHECK-LABEL: func.func @recursion
// CHECK: call @again
// CHECK: func.func private @again
// CHECK: call @again
func.func @recursion(%x: i32) {
  call @again(%x) : (i32) -> ()
  return
}
func.func private @again(%x: i32) {
  call @again(%x) : (i32) -> ()
  return
}
