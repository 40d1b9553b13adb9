// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-empty-entry-buffers)' --split-input-file | FileCheck %s

/// A zero-element buffer with a 0 past the first dimension is passed as
/// memref<0xT>; the body uses an empty local buffer of the old type.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[A:.*]]: memref<7x5x3xf32>, %[[EMPTY:.*]]: memref<0xf32>, %[[OUT:.*]]: memref<7x5x3xf32>)
// CHECK: %[[LOCAL:.*]] = memref.alloca() : memref<2x0x1xf32>
// CHECK: %[[VIEW:.*]] = memref.subview %[[A]]
// CHECK: memref.copy %[[LOCAL]], %[[VIEW]]
// CHECK: memref.copy %[[A]], %[[OUT]]
func.func public @main(%a: memref<7x5x3xf32>, %update: memref<2x0x1xf32>, %out: memref<7x5x3xf32>) {
  %view = memref.subview %a[1, 2, 0] [2, 0, 1] [1, 1, 1] : memref<7x5x3xf32> to memref<2x0x1xf32, strided<[15, 3, 1], offset: 21>>
  memref.copy %update, %view : memref<2x0x1xf32> to memref<2x0x1xf32, strided<[15, 3, 1], offset: 21>>
  memref.copy %a, %out : memref<7x5x3xf32> to memref<7x5x3xf32>
  return
}

// -----

/// Buffers whose strides MLIR can compute (0 in the first dimension, or no
/// zero at all) and private functions are left alone.
// CHECK-LABEL: func.func public @leading_zero
// CHECK-SAME: (%{{.*}}: memref<0x3xf32>, %{{.*}}: memref<4xf32>)
// CHECK-NOT: memref.alloca
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: memref<3x0xf32>)
// CHECK-NOT: memref.alloca
func.func public @leading_zero(%a: memref<0x3xf32>, %b: memref<4xf32>) {
  return
}
func.func private @helper(%a: memref<3x0xf32>) {
  return
}
