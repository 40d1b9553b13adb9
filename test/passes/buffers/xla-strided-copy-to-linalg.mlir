// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-strided-copy-to-linalg)' --split-input-file | FileCheck %s

/// A copy out of a strided view becomes linalg.copy (no memrefCopy call later).
// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[SRC:.*]]: memref<4x4xf32, strided<[8, 1]>>, %[[DST:.*]]: memref<4x4xf32>)
// CHECK-NOT: memref.copy
// CHECK: linalg.copy {{.*}}ins(%[[SRC]] : memref<4x4xf32, strided<[8, 1]>>) outs(%[[DST]] : memref<4x4xf32>)
func.func @strided(%src: memref<4x4xf32, strided<[8, 1]>>, %dst: memref<4x4xf32>) {
  memref.copy %src, %dst : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  return
}

// -----

/// A contiguous copy stays a memref.copy: it lowers to one memcpy.
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy
// CHECK-NOT: linalg.copy
func.func @contiguous(%src: memref<4x4xf32>, %dst: memref<4x4xf32>) {
  memref.copy %src, %dst : memref<4x4xf32> to memref<4x4xf32>
  return
}
