// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-reshaped-results)' --split-input-file | FileCheck %s

/// A returned collapse_shape of a local buffer: the buffer is allocated in the
/// returned shape and its writers get the expanded view of it.
// CHECK-LABEL: func.func @collapsed
// CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x6xf32>
// CHECK: %[[A:.*]] = memref.expand_shape %[[B]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 3] : memref<4x6xf32> into memref<4x2x3xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<4x2x3xf32>)
// CHECK-NOT: collapse_shape
// CHECK: return %[[B]] : memref<4x6xf32>
func.func @collapsed() -> memref<4x6xf32> {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x2x3xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4x2x3xf32>)
  %r = memref.collapse_shape %a [[0], [1, 2]] : memref<4x2x3xf32> into memref<4x6xf32>
  return %r : memref<4x6xf32>
}

// -----

/// An expand_shape the same way, with a collapsed view for the writers.
// CHECK-LABEL: func.func @expanded
// CHECK: %[[B:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK: %[[A:.*]] = memref.collapse_shape %[[B]] {{\[\[}}0, 1]] : memref<2x3xf32> into memref<6xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<6xf32>)
// CHECK: return %[[B]] : memref<2x3xf32>
func.func @expanded() -> memref<2x3xf32> {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<6xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<6xf32>)
  %r = memref.expand_shape %a [[0, 1]] output_shape [2, 3] : memref<6xf32> into memref<2x3xf32>
  return %r : memref<2x3xf32>
}

// -----

/// A buffer also returned as it is, an argument's reshape and a reshape with
/// another use stay.
// CHECK-LABEL: func.func @kept
// CHECK: memref.collapse_shape %[[X:.*]] {{\[\[}}0, 1]]
// CHECK: %[[A:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK: %[[R:.*]] = memref.collapse_shape %[[A]]
// CHECK: return %{{.*}}, %[[R]], %[[A]]
func.func @kept(%x: memref<2x3xf32>) -> (memref<6xf32>, memref<4xf32>, memref<2x2xf32>) {
  %rx = memref.collapse_shape %x [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  %a = memref.alloc() : memref<2x2xf32>
  %r = memref.collapse_shape %a [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  return %rx, %r, %a : memref<6xf32>, memref<4xf32>, memref<2x2xf32>
}

// -----

/// The reshape's other users (a kernel writing through it) take the new buffer.
// CHECK-LABEL: func.func @written_through
// CHECK: %[[B:.*]] = memref.alloc() : memref<6xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<6xf32>)
// CHECK: return %[[B]] : memref<6xf32>
func.func @written_through() -> memref<6xf32> {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<2x3xf32>
  %r = memref.collapse_shape %a [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  linalg.fill ins(%c : f32) outs(%r : memref<6xf32>)
  return %r : memref<6xf32>
}
