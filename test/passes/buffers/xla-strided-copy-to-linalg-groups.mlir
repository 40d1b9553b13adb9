// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-strided-copy-to-linalg)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-strided-copy-to-linalg{side-by-side=false})' --split-input-file | FileCheck %s --check-prefix=APART
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-strided-copy-to-linalg{split-bytes=4096 threads=2})' --split-input-file | FileCheck %s --check-prefix=SPLIT

/// An inner concatenate after bufferization: each operand copied into its
/// columns of one buffer. One helper copies both, row by row (each output
/// row filled in order, as XLA does), rows of different lengths each with
/// their own steps and tail. Apart (side-by-side=false): one helper each.
/// Split: the rows in chunks of an scf.forall (8 = 2 threads x 4), both
/// copies in each chunk.
// CHECK-LABEL: func.func private @xla_copy_rows
// CHECK-SAME: (%[[S0:.*]]: memref<64x96xf32>, %[[D0:.*]]: memref<64x96xf32, strided<[136, 1]>>, %[[S1:.*]]: memref<64x40xf32>, %[[D1:.*]]: memref<64x40xf32, strided<[136, 1], offset: 96>>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NOT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: vector.transfer_read %[[S0]][%[[I]], %[[J]]]
// CHECK: vector.transfer_write %{{.*}}, %[[D0]][%[[I]], %[[J]]]
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK: vector.transfer_read %[[S1]][%[[I]], %[[K]]]
// CHECK: vector.transfer_write %{{.*}}, %[[D1]][%[[I]], %[[K]]]
// CHECK: vector.transfer_read %[[S1]][%[[I]], %{{.*}}], {{.*}} vector<8xf32>
// CHECK-LABEL: func.func @side_by_side
// CHECK-COUNT-1: call @xla_copy_rows
// CHECK-NOT: call @xla_copy_rows
// CHECK-NOT: memref.copy %
// APART-LABEL: func.func @side_by_side
// APART-COUNT-2: call @xla_copy_rows
// SPLIT-LABEL: func.func private @xla_copy_rows
// SPLIT: scf.forall (%[[P:.*]]) in (8)
// SPLIT: arith.muli %[[P]]
// SPLIT: scf.for
// SPLIT: vector.transfer_write {{.*}} memref<64x96xf32, strided<[136, 1]>>
// SPLIT: vector.transfer_write {{.*}} memref<64x40xf32, strided<[136, 1], offset: 96>>
func.func @side_by_side(%x: memref<64x96xf32>, %y: memref<64x40xf32>, %out: memref<64x136xf32>) {
  %a = memref.subview %out[0, 0] [64, 96] [1, 1] : memref<64x136xf32> to memref<64x96xf32, strided<[136, 1]>>
  memref.copy %x, %a : memref<64x96xf32> to memref<64x96xf32, strided<[136, 1]>>
  %b = memref.subview %out[0, 96] [64, 40] [1, 1] : memref<64x136xf32> to memref<64x40xf32, strided<[136, 1], offset: 96>>
  memref.copy %y, %b : memref<64x40xf32> to memref<64x40xf32, strided<[136, 1], offset: 96>>
  return
}

// -----

/// Copies whose columns overlap are not one loop: the later must win
/// everywhere, row by row it would not where the rows differ.
// CHECK-LABEL: func.func @overlapping
// CHECK-COUNT-2: call @xla_copy_rows
func.func @overlapping(%x: memref<64x96xf32>, %y: memref<64x96xf32>, %out: memref<64x136xf32>) {
  %a = memref.subview %out[0, 0] [64, 96] [1, 1] : memref<64x136xf32> to memref<64x96xf32, strided<[136, 1]>>
  memref.copy %x, %a : memref<64x96xf32> to memref<64x96xf32, strided<[136, 1]>>
  %b = memref.subview %out[0, 40] [64, 96] [1, 1] : memref<64x136xf32> to memref<64x96xf32, strided<[136, 1], offset: 40>>
  memref.copy %y, %b : memref<64x96xf32> to memref<64x96xf32, strided<[136, 1], offset: 40>>
  return
}

// -----

/// A copy that reads the buffer the other writes (a view of it) keeps its
/// place after the first.
// CHECK-LABEL: func.func @reads_the_target
// CHECK-COUNT-2: call @xla_copy_rows
func.func @reads_the_target(%x: memref<64x64xf32>, %out: memref<64x128xf32>) {
  %a = memref.subview %out[0, 0] [64, 64] [1, 1] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 1]>>
  memref.copy %x, %a : memref<64x64xf32> to memref<64x64xf32, strided<[128, 1]>>
  %b = memref.subview %out[0, 64] [64, 64] [1, 1] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 1], offset: 64>>
  memref.copy %a, %b : memref<64x64xf32, strided<[128, 1]>> to memref<64x64xf32, strided<[128, 1], offset: 64>>
  return
}

// -----

/// An op with memory effects between the copies (a store into the buffer)
/// keeps them apart.
// CHECK-LABEL: func.func @store_between
// CHECK-COUNT-2: call @xla_copy_rows
func.func @store_between(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %out: memref<64x128xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %a = memref.subview %out[0, 0] [64, 64] [1, 1] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 1]>>
  memref.copy %x, %a : memref<64x64xf32> to memref<64x64xf32, strided<[128, 1]>>
  memref.store %v, %out[%c0, %c64] : memref<64x128xf32>
  %b = memref.subview %out[0, 64] [64, 64] [1, 1] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 1], offset: 64>>
  memref.copy %y, %b : memref<64x64xf32> to memref<64x64xf32, strided<[128, 1], offset: 64>>
  return
}

// -----

/// A contiguous copy (an outer concatenate's operand) stays one memcpy,
/// unless it is big enough to split: then rows in chunks on the threads.
// CHECK-LABEL: func.func @contiguous_block
// CHECK: memref.copy
// SPLIT-LABEL: func.func private @xla_copy_rows
// SPLIT: scf.forall (%{{.*}}) in (8)
// SPLIT-LABEL: func.func @contiguous_block
// SPLIT-NOT: memref.copy %
func.func @contiguous_block(%x: memref<64x96xf32>, %out: memref<128x96xf32>) {
  %a = memref.subview %out[64, 0] [64, 96] [1, 1] : memref<128x96xf32> to memref<64x96xf32, strided<[96, 1], offset: 6144>>
  memref.copy %x, %a : memref<64x96xf32> to memref<64x96xf32, strided<[96, 1], offset: 6144>>
  return
}

// -----

/// A target at an offset known only at run time (a dynamic_update_slice's
/// window) could meet the other: apart.
// CHECK-LABEL: func.func @dynamic_offset
// CHECK-COUNT-2: call @xla_copy_rows
func.func @dynamic_offset(%x: memref<64x64xf32>, %y: memref<64x32xf32>, %out: memref<64x128xf32>, %at: index) {
  %a = memref.subview %out[0, 0] [64, 64] [1, 1] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 1]>>
  memref.copy %x, %a : memref<64x64xf32> to memref<64x64xf32, strided<[128, 1]>>
  %b = memref.subview %out[0, %at] [64, 32] [1, 1] : memref<64x128xf32> to memref<64x32xf32, strided<[128, 1], offset: ?>>
  memref.copy %y, %b : memref<64x32xf32> to memref<64x32xf32, strided<[128, 1], offset: ?>>
  return
}
