// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-distinct-results)' --split-input-file | FileCheck %s

/// A buffer returned twice: the second result is a fresh copy; an argument
/// returned once stays.
// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[X:.*]]: memref<2xf32>)
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: %[[COPY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[COPY]] : memref<4xf32> to memref<4xf32>
// CHECK: return %[[A]], %[[COPY]], %[[X]] : memref<4xf32>, memref<4xf32>, memref<2xf32>
func.func @twice(%x: memref<2xf32>) -> (memref<4xf32>, memref<4xf32>, memref<2xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  return %a, %a, %x : memref<4xf32>, memref<4xf32>, memref<2xf32>
}

// -----

/// Distinct results are left alone.
// CHECK-LABEL: func.func @distinct
// CHECK-NOT: memref.copy
// CHECK: return %{{.*}}, %{{.*}} : memref<f32>, memref<f32>
func.func @distinct() -> (memref<f32>, memref<f32>) {
  %a = memref.alloc() : memref<f32>
  %b = memref.alloc() : memref<f32>
  return %a, %b : memref<f32>, memref<f32>
}
