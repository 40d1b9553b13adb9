// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-view-copy-to-linalg)' --split-input-file | FileCheck %s

/// A copy out of a view with a computed offset becomes a linalg.copy (a kernel).
// CHECK-LABEL: func.func @dynamic_window
// CHECK-SAME: (%[[IN:.*]]: memref<3xf32>, %[[OUT:.*]]: memref<1xf32>, %[[AT:.*]]: index)
// CHECK: %[[VIEW:.*]] = memref.subview %[[IN]][%[[AT]]]
// CHECK-NEXT: linalg.copy {{.*}}ins(%[[VIEW]] : {{.*}}) outs(%[[OUT]] : memref<1xf32>)
// CHECK-NOT: memref.copy
func.func @dynamic_window(%in: memref<3xf32>, %out: memref<1xf32>, %at: index) {
  %view = memref.subview %in[%at] [1] [1] : memref<3xf32> to memref<1xf32, strided<[1], offset: ?>>
  memref.copy %view, %out : memref<1xf32, strided<[1], offset: ?>> to memref<1xf32>
  return
}

// -----

/// A contiguous view with a static offset is still not a plain buffer.
// CHECK-LABEL: func.func @static_offset
// CHECK: linalg.copy
// CHECK-NOT: memref.copy
func.func @static_offset(%in: memref<3xf32>, %out: memref<1xf32>) {
  %view = memref.subview %in[1] [1] [1] : memref<3xf32> to memref<1xf32, strided<[1], offset: 1>>
  memref.copy %view, %out : memref<1xf32, strided<[1], offset: 1>> to memref<1xf32>
  return
}

// -----

/// Copies between plain buffers stay memcpys.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: memref.copy
// CHECK-NOT: linalg.copy
func.func @plain(%in: memref<2x3xf32>, %out: memref<2x3xf32>) {
  memref.copy %in, %out : memref<2x3xf32> to memref<2x3xf32>
  return
}
