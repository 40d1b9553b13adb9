// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-epilogue-rows)' | FileCheck %s

func.func private @xlac_ukernel_f32_8x32(i64, i64, i64, i64, i64, i64, i64, i64)
func.func private @xlac_ukernel_f32_5x32(i64, i64, i64, i64, i64, i64, i64, i64)

/// A whole tile's epilogue after the call (the bias read hoisted out of the
/// tile loop: its row 0):
/// a rolled loop over the 8 rows, on one row's vectors.
// CHECK-LABEL: func.func @whole_tile
// CHECK: %[[B:.*]] = vector.transfer_read %{{.*}} : memref<32xf32>, vector<8x32xf32>
// CHECK: func.call @xlac_ukernel_f32_8x32
// CHECK: %[[ROW:.*]] = vector.extract %[[B]][0] : vector<32xf32> from vector<8x32xf32>
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %c8{{.*}} step %c1
// CHECK:   %[[T:.*]] = vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<8x32xf32>, vector<32xf32>
// CHECK:   arith.addf %[[T]], %[[ROW]] : vector<32xf32>
// CHECK-NOT: vector<8x32xf32>
// CHECK:   vector.transfer_write %{{.*}} {in_bounds = [true]} : vector<32xf32>, memref<197x32xf32>
// CHECK: } {llvm.loop_annotation =
func.func @whole_tile(%buf: memref<8x32xf32>, %bias: memref<32xf32>, %c: memref<197x32xf32>, %i: index, %p: i64) {
  %c0 = arith.constant 0 : index
  %pad = ub.poison : f32
  %h = arith.constant dense<0.5> : vector<8x32xf32>
  %mask = vector.constant_mask [5, 32] : vector<8x32xi1>
  %b = vector.transfer_read %bias[%c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0) -> (0, d0)>} : memref<32xf32>, vector<8x32xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %j = %c0 to %c2 step %c1 {
  func.call @xlac_ukernel_f32_8x32(%p, %p, %p, %p, %p, %p, %p, %p) : (i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  %t = vector.transfer_read %buf[%c0, %c0], %pad {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
  %x0 = arith.addf %t, %b : vector<8x32xf32>
  %e0 = arith.mulf %x0, %h : vector<8x32xf32>
  %e1 = arith.addf %e0, %x0 : vector<8x32xf32>
  %e2 = arith.mulf %e1, %h : vector<8x32xf32>
  %e3 = arith.addf %e2, %x0 : vector<8x32xf32>
  %e4 = arith.mulf %e3, %h : vector<8x32xf32>
  %e5 = arith.addf %e4, %x0 : vector<8x32xf32>
  %e6 = arith.mulf %e5, %h : vector<8x32xf32>
  %e7 = arith.addf %e6, %x0 : vector<8x32xf32>
  %e8 = arith.mulf %e7, %h : vector<8x32xf32>
  %e9 = arith.addf %e8, %x0 : vector<8x32xf32>
  %e10 = arith.mulf %e9, %h : vector<8x32xf32>
  %e11 = arith.addf %e10, %x0 : vector<8x32xf32>
  %e12 = arith.mulf %e11, %h : vector<8x32xf32>
  %e13 = arith.addf %e12, %x0 : vector<8x32xf32>
  %e14 = arith.mulf %e13, %h : vector<8x32xf32>
  %e15 = arith.addf %e14, %x0 : vector<8x32xf32>
  vector.transfer_write %e15, %c[%i, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<197x32xf32>
  }
  return
}

/// The masked 5-row edge tile: the loop runs its 5 kept rows, unmasked.
// CHECK-LABEL: func.func @edge_tile
// CHECK: func.call @xlac_ukernel_f32_5x32
// CHECK: scf.for %{{.*}} = %{{.*}} to %c5{{.*}} step %c1
// CHECK-NOT: %mask
// CHECK: vector.transfer_write %{{.*}} : vector<32xf32>, memref<197x32xf32>
func.func @edge_tile(%buf: memref<5x32xf32>, %bias: memref<32xf32>, %c: memref<197x32xf32>, %i: index, %p: i64) {
  %c0 = arith.constant 0 : index
  %pad = ub.poison : f32
  %h = arith.constant dense<0.5> : vector<8x32xf32>
  %mask = vector.constant_mask [5, 32] : vector<8x32xi1>
  %b = vector.transfer_read %bias[%c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0) -> (0, d0)>} : memref<32xf32>, vector<8x32xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %j = %c0 to %c2 step %c1 {
  func.call @xlac_ukernel_f32_5x32(%p, %p, %p, %p, %p, %p, %p, %p) : (i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  %t = vector.transfer_read %buf[%c0, %c0], %pad, %mask {in_bounds = [true, true]} : memref<5x32xf32>, vector<8x32xf32>
  %x0 = arith.addf %t, %b : vector<8x32xf32>
  %e0 = arith.mulf %x0, %h : vector<8x32xf32>
  %e1 = arith.addf %e0, %x0 : vector<8x32xf32>
  %e2 = arith.mulf %e1, %h : vector<8x32xf32>
  %e3 = arith.addf %e2, %x0 : vector<8x32xf32>
  %e4 = arith.mulf %e3, %h : vector<8x32xf32>
  %e5 = arith.addf %e4, %x0 : vector<8x32xf32>
  %e6 = arith.mulf %e5, %h : vector<8x32xf32>
  %e7 = arith.addf %e6, %x0 : vector<8x32xf32>
  %e8 = arith.mulf %e7, %h : vector<8x32xf32>
  %e9 = arith.addf %e8, %x0 : vector<8x32xf32>
  %e10 = arith.mulf %e9, %h : vector<8x32xf32>
  %e11 = arith.addf %e10, %x0 : vector<8x32xf32>
  %e12 = arith.mulf %e11, %h : vector<8x32xf32>
  %e13 = arith.addf %e12, %x0 : vector<8x32xf32>
  %e14 = arith.mulf %e13, %h : vector<8x32xf32>
  %e15 = arith.addf %e14, %x0 : vector<8x32xf32>
  vector.transfer_write %e15, %c[%i, %c0], %mask {in_bounds = [true, true]} : vector<8x32xf32>, memref<197x32xf32>
  }
  return
}

/// A short epilogue (a bias add and a few ops) stays on the whole tile.
// CHECK-LABEL: func.func @short_epilogue
// CHECK: func.call @xlac_ukernel_f32_8x32
// CHECK-NOT: scf.for
// CHECK: vector.transfer_write %{{.*}} : vector<8x32xf32>, memref<197x32xf32>
func.func @short_epilogue(%buf: memref<8x32xf32>, %bias: memref<32xf32>, %c: memref<197x32xf32>, %i: index, %p: i64) {
  %c0 = arith.constant 0 : index
  %pad = ub.poison : f32
  %h = arith.constant dense<0.5> : vector<8x32xf32>
  %mask = vector.constant_mask [5, 32] : vector<8x32xi1>
  %b = vector.transfer_read %bias[%c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0) -> (0, d0)>} : memref<32xf32>, vector<8x32xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %j = %c0 to %c2 step %c1 {
  func.call @xlac_ukernel_f32_8x32(%p, %p, %p, %p, %p, %p, %p, %p) : (i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  %t = vector.transfer_read %buf[%c0, %c0], %pad {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
  %x0 = arith.addf %t, %b : vector<8x32xf32>
  %e0 = arith.mulf %x0, %h : vector<8x32xf32>
  %e1 = arith.addf %e0, %x0 : vector<8x32xf32>
  %e2 = arith.mulf %e1, %h : vector<8x32xf32>
  %e3 = arith.addf %e2, %x0 : vector<8x32xf32>
  vector.transfer_write %e3, %c[%i, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<197x32xf32>
  }
  return
}
