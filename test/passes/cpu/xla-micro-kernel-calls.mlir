// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-micro-kernel-calls)' --split-input-file | FileCheck %s

#sum = affine_map<()[s0, s1] -> (s0 + s1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

/// AVX2's 6 x 16 register tile over a 256-deep block of A (column k0 + k) and
/// a packed panel of B: read C, the k loop, write C become one call, with the
/// addresses of C[i, j], A[i, k0] and B[0, j], their row strides and k's count.
// CHECK: func.func private @xlac_ukernel_f32_6x16(i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @tile_from_c
// CHECK-NOT: scf.for
// CHECK-NOT: vector.
// CHECK: %[[C:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[LDC:.*]] = arith.index_cast %[[SC:strides]]#0 : index to i64
// CHECK: %[[K0:.*]] = affine.apply #{{.*}}()[%arg5, %c0]
// CHECK: arith.muli %[[K0]], %{{.*}}#1 : index
// CHECK: %[[A:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[LDA:.*]] = arith.index_cast %{{.*}}#0 : index to i64
// CHECK: %[[B:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[LDB:.*]] = arith.index_cast %{{.*}}#0 : index to i64
// CHECK: %[[COUNT:.*]] = arith.subi %c256, %c0 : index
// CHECK: %[[K:.*]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK: %[[FROM_C:.*]] = arith.constant 1 : i64
// CHECK: call @xlac_ukernel_f32_6x16(%[[C]], %[[LDC]], %[[A]], %[[LDA]], %[[B]], %[[LDB]], %[[K]], %[[FROM_C]])
// CHECK-NEXT: return
func.func @tile_from_c(%A: memref<64x512xf32>, %B: memref<256x32xf32>,
                       %C: memref<64x32xf32, strided<[128, 1], offset: ?>>,
                       %i: index, %j: index, %k0: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 0.000000e+00 : f32
  %t = vector.transfer_read %C[%i, %j], %cst {in_bounds = [true, true]} : memref<64x32xf32, strided<[128, 1], offset: ?>>, vector<6x16xf32>
  %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %t) -> (vector<6x16xf32>) {
    %kk = affine.apply #sum()[%k0, %k]
    %a = vector.transfer_read %A[%i, %kk], %cst {in_bounds = [true, true]} : memref<64x512xf32>, vector<6x1xf32>
    %b = vector.transfer_read %B[%k, %j], %cst {in_bounds = [true]} : memref<256x32xf32>, vector<16xf32>
    %b2 = vector.shape_cast %b : vector<16xf32> to vector<1x16xf32>
    %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b2, %acc : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
    scf.yield %s : vector<6x16xf32>
  }
  vector.transfer_write %r, %C[%i, %j] {in_bounds = [true, true]} : vector<6x16xf32>, memref<64x32xf32, strided<[128, 1], offset: ?>>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

/// A short-k tile of a batch (3-D memrefs, batch index %n) whose fill was
/// fused into it: its accumulators start at zero, C is not read.
// CHECK-LABEL: func.func @batch_tile_from_zero
// CHECK-NOT: scf.for
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: call @xlac_ukernel_f32_4x16({{.*}}, %[[ZERO]])
func.func @batch_tile_from_zero(%A: memref<8x64x128xf32>, %B: memref<8x128x48xf32>,
                                %C: memref<8x64x48xf32>, %n: index, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 0.000000e+00 : f32
  %zeros = arith.constant dense<0.000000e+00> : vector<4x16xf32>
  %r = scf.for %k = %c0 to %c128 step %c1 iter_args(%acc = %zeros) -> (vector<4x16xf32>) {
    %a = vector.transfer_read %A[%n, %i, %k], %cst {in_bounds = [true, true]} : memref<8x64x128xf32>, vector<4x1xf32>
    %b = vector.transfer_read %B[%n, %k, %j], %cst {in_bounds = [true]} : memref<8x128x48xf32>, vector<16xf32>
    %b2 = vector.shape_cast %b : vector<16xf32> to vector<1x16xf32>
    %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b2, %acc : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
    scf.yield %s : vector<4x16xf32>
  }
  vector.transfer_write %r, %C[%n, %i, %j] {in_bounds = [true, true]} : vector<4x16xf32>, memref<8x64x48xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

/// Left as it is: 64 k steps, too few for a call to pay (MIN_K).
// CHECK-LABEL: func.func @short_tile_stays
// CHECK-NOT: call
// CHECK: scf.for
func.func @short_tile_stays(%A: memref<64x64xf32>, %B: memref<64x48xf32>, %C: memref<64x48xf32>,
                            %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.000000e+00 : f32
  %zeros = arith.constant dense<0.000000e+00> : vector<4x16xf32>
  %r = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zeros) -> (vector<4x16xf32>) {
    %a = vector.transfer_read %A[%i, %k], %cst {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x1xf32>
    %b = vector.transfer_read %B[%k, %j], %cst {in_bounds = [true]} : memref<64x48xf32>, vector<16xf32>
    %b2 = vector.shape_cast %b : vector<16xf32> to vector<1x16xf32>
    %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b2, %acc : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
    scf.yield %s : vector<4x16xf32>
  }
  vector.transfer_write %r, %C[%i, %j] {in_bounds = [true, true]} : vector<4x16xf32>, memref<64x48xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

/// Left as it is: A's column steps by 2 per k (k * 2), no micro-kernel's access.
// CHECK-LABEL: func.func @strided_k_stays
// CHECK-NOT: call
// CHECK: scf.for
// CHECK: vector.contract
func.func @strided_k_stays(%A: memref<64x512xf32>, %B: memref<256x32xf32>, %C: memref<64x32xf32>,
                           %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 0.000000e+00 : f32
  %t = vector.transfer_read %C[%i, %j], %cst {in_bounds = [true, true]} : memref<64x32xf32>, vector<6x16xf32>
  %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %t) -> (vector<6x16xf32>) {
    %kk = arith.muli %k, %c2 : index
    %a = vector.transfer_read %A[%i, %kk], %cst {in_bounds = [true, true]} : memref<64x512xf32>, vector<6x1xf32>
    %b = vector.transfer_read %B[%k, %j], %cst {in_bounds = [true]} : memref<256x32xf32>, vector<16xf32>
    %b2 = vector.shape_cast %b : vector<16xf32> to vector<1x16xf32>
    %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b2, %acc : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
    scf.yield %s : vector<6x16xf32>
  }
  vector.transfer_write %r, %C[%i, %j] {in_bounds = [true, true]} : vector<6x16xf32>, memref<64x32xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

/// Left as it is: an edge tile, its reads of C and A masked (the rows a tile
/// leaves over stay compiled into the program).
// CHECK-LABEL: func.func @masked_edge_stays
// CHECK-NOT: call
// CHECK: vector.contract
func.func @masked_edge_stays(%A: memref<64x512xf32>, %B: memref<256x32xf32>, %C: memref<64x32xf32>,
                             %i: index, %j: index, %rows: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 0.000000e+00 : f32
  %m = vector.create_mask %rows, %c16 : vector<6x16xi1>
  %t = vector.transfer_read %C[%i, %j], %cst, %m {in_bounds = [true, true]} : memref<64x32xf32>, vector<6x16xf32>
  %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %t) -> (vector<6x16xf32>) {
    %a = vector.transfer_read %A[%i, %k], %cst {in_bounds = [true, true]} : memref<64x512xf32>, vector<6x1xf32>
    %b = vector.transfer_read %B[%k, %j], %cst {in_bounds = [true]} : memref<256x32xf32>, vector<16xf32>
    %b2 = vector.shape_cast %b : vector<16xf32> to vector<1x16xf32>
    %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b2, %acc : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
    scf.yield %s : vector<6x16xf32>
  }
  vector.transfer_write %r, %C[%i, %j], %m {in_bounds = [true, true]} : vector<6x16xf32>, memref<64x32xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#w = affine_map<(d0, d1) -> (d0 + d1)>

/// A convolution's tile (4 pixels x 16 filters) over 128 input channels, 8 at a
/// time, C read and written back at each step through a subview: one call,
/// k = 128, from the address the subview writes.
// CHECK-LABEL: func.func @convolution_tile
// CHECK-NOT: scf.for
// CHECK: %[[VIEW:.*]] = memref.subview %arg2[0, %arg3, %arg4, %arg5] [1, 1, 4, 16] [1, 1, 1, 1]
// CHECK: memref.extract_strided_metadata %[[VIEW]]
// CHECK: %[[COUNT:.*]] = arith.subi %c128, %c0 : index
// CHECK: %[[K:.*]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK: %[[FROM_C:.*]] = arith.constant 1 : i64
// CHECK: call @xlac_ukernel_f32_4x16({{.*}}, %[[K]], %[[FROM_C]])
func.func @convolution_tile(%x: memref<2x58x58x128xf32>, %f: memref<3x3x128x64xf32>,
                            %y: memref<2x56x56x64xf32>, %oh: index, %ow: index, %o: index,
                            %kh: index, %kw: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 0.000000e+00 : f32
  scf.for %ci = %c0 to %c128 step %c8 {
    %view = memref.subview %y[0, %oh, %ow, %o] [1, 1, 4, 16] [1, 1, 1, 1] : memref<2x56x56x64xf32> to memref<1x1x4x16xf32, strided<[200704, 3584, 64, 1], offset: ?>>
    %ih = affine.apply #w(%oh, %kh)
    %iw = affine.apply #w(%ow, %kw)
    %a = vector.transfer_read %x[%c0, %ih, %iw, %ci], %cst {in_bounds = [true, true]} : memref<2x58x58x128xf32>, vector<4x8xf32>
    %b = vector.transfer_read %f[%kh, %kw, %ci, %o], %cst {in_bounds = [true, true]} : memref<3x3x128x64xf32>, vector<8x16xf32>
    %t = vector.transfer_read %y[%c0, %oh, %ow, %o], %cst {in_bounds = [true, true]} : memref<2x56x56x64xf32>, vector<4x16xf32>
    %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %t : vector<4x8xf32>, vector<8x16xf32> into vector<4x16xf32>
    vector.transfer_write %s, %view[%c0, %c0, %c0, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<1x1x4x16xf32, strided<[200704, 3584, 64, 1], offset: ?>>
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

/// Left as it is: the write goes elsewhere than the read (another pixel).
// CHECK-LABEL: func.func @convolution_tile_elsewhere_stays
// CHECK-NOT: call
// CHECK: vector.contract
func.func @convolution_tile_elsewhere_stays(%x: memref<2x58x58x128xf32>, %f: memref<3x3x128x64xf32>,
                                            %y: memref<2x56x56x64xf32>, %oh: index, %ow: index,
                                            %o: index, %next: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 0.000000e+00 : f32
  scf.for %ci = %c0 to %c128 step %c8 {
    %a = vector.transfer_read %x[%c0, %oh, %ow, %ci], %cst {in_bounds = [true, true]} : memref<2x58x58x128xf32>, vector<4x8xf32>
    %b = vector.transfer_read %f[%c0, %c0, %ci, %o], %cst {in_bounds = [true, true]} : memref<3x3x128x64xf32>, vector<8x16xf32>
    %t = vector.transfer_read %y[%c0, %oh, %ow, %o], %cst {in_bounds = [true, true]} : memref<2x56x56x64xf32>, vector<4x16xf32>
    %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %t : vector<4x8xf32>, vector<8x16xf32> into vector<4x16xf32>
    vector.transfer_write %s, %y[%c0, %oh, %next, %o] {in_bounds = [true, true]} : vector<4x16xf32>, memref<2x56x56x64xf32>
  }
  return
}

// -----

#row_a = affine_map<(d0, d1) -> (d1)>
#row_b = affine_map<(d0, d1) -> (d1, d0)>
#row_c = affine_map<(d0, d1) -> (d0)>

/// A stride-2 convolution's tile, 2 pixels x 8 filters from 3 rows of A: C's
/// rows contracted one at a time with A's rows 0 and 2 and put back. One call
/// whose A row stride is twice the memref's (and k = 128 channels).
// CHECK-LABEL: func.func @strided_convolution_tile
// CHECK-NOT: scf.for
// CHECK: %[[LDA:.*]] = arith.index_cast %strides_{{[0-9]+}}#2 : index to i64
// CHECK: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK: %[[LDA2:.*]] = arith.muli %[[LDA]], %[[TWO]] : i64
// CHECK: call @xlac_ukernel_f32_2x8(%{{.*}}, %{{.*}}, %{{.*}}, %[[LDA2]],
func.func @strided_convolution_tile(%x: memref<2x15x15x128xf32>, %f: memref<3x3x128x8xf32>,
                                    %y: memref<2x7x7x8xf32>, %oh: index, %ow: index, %ih: index,
                                    %iw: index, %kh: index, %kw: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 0.000000e+00 : f32
  scf.for %ci = %c0 to %c128 step %c8 {
    %a = vector.transfer_read %x[%c0, %ih, %iw, %ci], %cst {in_bounds = [true, true]} : memref<2x15x15x128xf32>, vector<3x8xf32>
    %b = vector.transfer_read %f[%kh, %kw, %ci, %c0], %cst {in_bounds = [true, true]} : memref<3x3x128x8xf32>, vector<8x8xf32>
    %t = vector.transfer_read %y[%c0, %oh, %ow, %c0], %cst {in_bounds = [true, true]} : memref<2x7x7x8xf32>, vector<2x8xf32>
    %a0 = vector.extract %a[0] : vector<8xf32> from vector<3x8xf32>
    %t0 = vector.extract %t[0] : vector<8xf32> from vector<2x8xf32>
    %s0 = vector.contract {indexing_maps = [#row_a, #row_b, #row_c], iterator_types = ["parallel", "reduction"], kind = #vector.kind<add>} %a0, %b, %t0 : vector<8xf32>, vector<8x8xf32> into vector<8xf32>
    %a2 = vector.extract %a[2] : vector<8xf32> from vector<3x8xf32>
    %t1 = vector.extract %t[1] : vector<8xf32> from vector<2x8xf32>
    %s1 = vector.contract {indexing_maps = [#row_a, #row_b, #row_c], iterator_types = ["parallel", "reduction"], kind = #vector.kind<add>} %a2, %b, %t1 : vector<8xf32>, vector<8x8xf32> into vector<8xf32>
    %r0 = vector.insert_strided_slice %s0, %t {offsets = [0, 0], strides = [1]} : vector<8xf32> into vector<2x8xf32>
    %r1 = vector.insert_strided_slice %s1, %r0 {offsets = [1, 0], strides = [1]} : vector<8xf32> into vector<2x8xf32>
    vector.transfer_write %r1, %y[%c0, %oh, %ow, %c0] {in_bounds = [true, true]} : vector<2x8xf32>, memref<2x7x7x8xf32>
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

/// A tile from zeros written into a result of the program (an argument of
/// the public entry) of 8 MiB: the kernel storing C with non-temporal stores,
/// and one sfence after the outermost loop of the tiles; the same tile into a
/// buffer of the program's own (read again later) keeps the plain kernel.
// CHECK-LABEL: func.func @streamed_result
// CHECK: scf.for
// CHECK: call @xlac_ukernel_f32_8x32_nt(
// CHECK: }
// CHECK-NEXT: llvm.inline_asm has_side_effects "sfence", ""
// CHECK-NEXT: return
// CHECK-LABEL: func.func @kept_buffer
// CHECK-NOT: sfence
// CHECK: call @xlac_ukernel_f32_8x32(
// CHECK-NOT: sfence
func.func @streamed_result(%A: memref<256x256xf32>, %B: memref<256x32xf32>, %out: memref<2x128x8192xf32>, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 0.000000e+00 : f32
  %zeros = arith.constant dense<0.000000e+00> : vector<8x32xf32>
  %C = memref.collapse_shape %out [[0, 1], [2]] : memref<2x128x8192xf32> into memref<256x8192xf32>
  scf.for %i = %c0 to %c256 step %c8 {
    %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<8x32xf32>) {
      %a = vector.transfer_read %A[%i, %k], %cst {in_bounds = [true, true]} : memref<256x256xf32>, vector<8x1xf32>
      %b = vector.transfer_read %B[%k, %c0], %cst {in_bounds = [true]} : memref<256x32xf32>, vector<32xf32>
      %b2 = vector.shape_cast %b : vector<32xf32> to vector<1x32xf32>
      %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b2, %acc : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
      scf.yield %s : vector<8x32xf32>
    }
    vector.transfer_write %r, %C[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, memref<256x8192xf32>
  }
  return
}

func.func @kept_buffer(%A: memref<256x256xf32>, %B: memref<256x32xf32>, %j: index) -> memref<256x8192xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 0.000000e+00 : f32
  %zeros = arith.constant dense<0.000000e+00> : vector<8x32xf32>
  %C = memref.alloc() : memref<256x8192xf32>
  scf.for %i = %c0 to %c256 step %c8 {
    %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<8x32xf32>) {
      %a = vector.transfer_read %A[%i, %k], %cst {in_bounds = [true, true]} : memref<256x256xf32>, vector<8x1xf32>
      %b = vector.transfer_read %B[%k, %c0], %cst {in_bounds = [true]} : memref<256x32xf32>, vector<32xf32>
      %b2 = vector.shape_cast %b : vector<32xf32> to vector<1x32xf32>
      %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b2, %acc : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
      scf.yield %s : vector<8x32xf32>
    }
    vector.transfer_write %r, %C[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, memref<256x8192xf32>
  }
  return %C : memref<256x8192xf32>
}
