// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-horizontal-launches)' --split-input-file | FileCheck %s

/// Two independent loop kernels (two optimizer moments): one launch of 3 + 1
/// blocks at the second's place, each body under its block range, the second's
/// block id shifted back to 0.
// CHECK-LABEL: func.func @independent
// CHECK: %[[BLOCKS:.*]] = arith.constant 4 : index
// CHECK: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]],
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[B]], %c3
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.store %{{.*}}, %arg1[%[[B]]]
// CHECK: %[[TO:.*]] = arith.cmpi ult, %[[B]], %c4
// CHECK: %[[FROM:.*]] = arith.cmpi uge, %[[B]], %c3
// CHECK: %[[SECOND:.*]] = arith.andi %[[FROM]], %[[TO]]
// CHECK: scf.if %[[SECOND]] {
// CHECK: %[[LOCAL:.*]] = arith.subi %[[B]], %c3
// CHECK: memref.store %{{.*}}, %arg2[%[[LOCAL]]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @independent(%g: memref<4xf32>, %m: memref<4xf32>, %v: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %g[%bx] : memref<4xf32>
    memref.store %x, %m[%bx] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %g[%bx] : memref<4xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %v[%bx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

/// The second reads what the first writes (through a view): two launches.
// CHECK-LABEL: func.func @dependent
// CHECK: gpu.launch
// CHECK: gpu.launch
func.func @dependent(%g: memref<4xf32>, %m: memref<4xf32>, %v: memref<2x2xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %g[%tx] : memref<4xf32>
    memref.store %x, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  %view = memref.expand_shape %m [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %view[%tx, %tx] : memref<2x2xf32>
    memref.store %x, %v[%tx, %tx] : memref<2x2xf32>
    gpu.terminator
  }
  return
}

// -----

/// 16x16 threads and 2-D grids merge with 256-thread blocks: ids delinearised
/// (x fastest), the workgroup buffers kept. The 64-thread kernel between stays
/// before the merged launch: the last kernel writes what it reads.
// CHECK-LABEL: func.func @tiles
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c64,
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[N:.*]], {{.*}}) threads({{.*}}) in (%{{.*}} = %c256{{.*}}) workgroup(%[[TILE:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK: arith.remui %{{.*}}, %c16
// CHECK: arith.divui %{{.*}}, %c16
// CHECK: memref.store %{{.*}}, %[[TILE]]
// CHECK: gpu.barrier
// CHECK-NOT: gpu.launch
func.func @tiles(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %c: memref<64xf32>, %d: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c2, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c16, %sz = %c1)
             workgroup(%tile : memref<16x16xf32, #gpu.address_space<workgroup>>) {
    %x = memref.load %a[%ty, %tx] : memref<16x16xf32>
    memref.store %x, %tile[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %y = memref.load %tile[%tx, %ty] : memref<16x16xf32, #gpu.address_space<workgroup>>
    memref.store %y, %b[%ty, %tx] : memref<16x16xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %x = memref.load %c[%tx] : memref<64xf32>
    memref.store %x, %d[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %c[%tx] : memref<64xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %c[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

/// Two parameters' updates, each a moment then the parameter reading it: the
/// second moment moves up beside the first and the first parameter down beside
/// the second: two launches, the moments' before the parameters'.
// CHECK-LABEL: func.func @two_updates
// CHECK: gpu.launch
// CHECK-DAG: memref.store %{{.*}}, %arg2[
// CHECK-DAG: memref.store %{{.*}}, %expand_shape[
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-DAG: memref.store %{{.*}}, %arg4[
// CHECK-DAG: memref.store %{{.*}}, %arg5[
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @two_updates(%g0: memref<4xf32>, %g1: memref<4xf32>, %m0: memref<4xf32>,
                       %m1: memref<4xf32>, %p0: memref<4xf32>, %p1: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %g0[%tx] : memref<4xf32>
    memref.store %x, %m0[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %m0[%tx] : memref<4xf32>
    memref.store %x, %p0[%tx] : memref<4xf32>
    gpu.terminator
  }
  %view = memref.expand_shape %m1 [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %g1[%tx] : memref<4xf32>
    memref.store %x, %view[%tx, %tx] : memref<2x2xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %m1[%tx] : memref<4xf32>
    memref.store %x, %p1[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

/// A cuBLASLt call writes only C (its third operand): the kernels before and after
/// it that read its A run as one launch (where the first was: groups go first).
// CHECK-LABEL: func.func @beside_a_gemm
// CHECK: gpu.launch
// CHECK-DAG: memref.store %{{.*}}, %arg3[
// CHECK-DAG: memref.store %{{.*}}, %arg4[
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: call @xla_gemm_0
// CHECK-NOT: gpu.launch
func.func private @xla_gemm_0(memref<4x4xf32>, memref<4x4xf32>, memref<4x4xf32>)
func.func @beside_a_gemm(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>,
                         %x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx, %tx] : memref<4x4xf32>
    memref.store %v, %x[%tx, %tx] : memref<4x4xf32>
    gpu.terminator
  }
  call @xla_gemm_0(%a, %b, %c) : (memref<4x4xf32>, memref<4x4xf32>, memref<4x4xf32>) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx, %tx] : memref<4x4xf32>
    memref.store %v, %y[%tx, %tx] : memref<4x4xf32>
    gpu.terminator
  }
  return
}

// -----

/// In a host loop the carried buffers may be one buffer (an iteration may yield
/// one value twice): kernels on two of them stay two launches.
// CHECK-LABEL: func.func @carried
// CHECK: scf.for
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: scf.yield
func.func @carried(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %a, %y = %b) -> (memref<4xf32>, memref<4xf32>) {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%tx] : memref<4xf32>
      gpu.terminator
    }
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %v = memref.load %y[%tx] : memref<4xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %y[%tx] : memref<4xf32>
      gpu.terminator
    }
    scf.yield %x, %y : memref<4xf32>, memref<4xf32>
  } {xla.host_loop}
  return
}
