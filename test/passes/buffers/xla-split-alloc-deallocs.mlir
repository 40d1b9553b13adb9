// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-split-alloc-deallocs)' --split-input-file | FileCheck %s

/// Fresh allocations, nothing retained: one dealloc each, with its condition.
// CHECK-LABEL: func.func @fresh
// CHECK-SAME: (%[[C:[a-z0-9]+]]: i1, %[[D:[a-z0-9]+]]: i1)
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[C]])
// CHECK-NEXT: bufferization.dealloc (%[[B]] : memref<8xf32>) if (%[[D]])
// CHECK-NEXT: return
func.func @fresh(%c: i1, %d: i1) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf32>) if (%c, %d)
  return
}

// -----

/// A buffer that is not a fresh allocation may alias another: left whole.
// CHECK-LABEL: func.func @maybe_aliasing
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>) if
func.func @maybe_aliasing(%m: memref<4xf32>, %c: i1) {
  %a = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%a, %m : memref<4xf32>, memref<4xf32>) if (%c, %c)
  return
}

// -----

/// Retained values get updated conditions from the whole dealloc: left whole.
// CHECK-LABEL: func.func @retains
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<8xf32>) if (%{{.*}}, %{{.*}}) retain
func.func @retains(%r: memref<2xf32>, %c: i1) -> i1 {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  %k = bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf32>) if (%c, %c) retain (%r : memref<2xf32>)
  return %k : i1
}
