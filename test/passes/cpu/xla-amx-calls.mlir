// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-amx-calls{threads=2})' --split-input-file | FileCheck %s

/// A marked bf16 matmul starting from zeros: a thread loop over C's blocks of
/// 256 rows (all 64 here) and groups of 32-column chunks (one chunk a group
/// here: 3 chunks, an iteration for each of 2 threads at least), one AMX
/// kernel call a chunk in the group's function (its loop a function of its
/// own: no blocks in the thread loop's body), with the addresses of C, A and B at the chunk, their
/// row strides, k, the chunk's rows and accumulate 0.
// CHECK-LABEL: func.func @from_zeros
// CHECK-NOT: linalg.matmul
// CHECK: call @xla_amx_matmul_[[N:.*]](%arg0, %arg1, %arg2)
// CHECK: func.func private @xla_amx_matmul_[[N]](
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (1, 3)
// CHECK: func.call @xla_amx_matmul_[[N]]_group({{.*}}) {no_inline}
// CHECK: func.func private @xla_amx_matmul_[[N]]_group(
// CHECK: %[[K:.*]] = arith.constant 128 : i64
// CHECK: %[[ACC:.*]] = arith.constant 0 : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// CHECK: func.call @xlac_ukernel_amx_bf16_32x32({{.*}}, %[[K]], %{{.*}}, %[[ACC]])
// CHECK: func.func private @xlac_ukernel_amx_bf16_32x32(i64, i64, i64, i64, i64, i64, i64, i64, i64)
func.func @from_zeros(%a: memref<64x128xbf16>, %b: memref<128x96xbf16>, %c: memref<64x96xf32>) {
  linalg.matmul {xla.amx, xla.amx_zeros} ins(%a, %b : memref<64x128xbf16>, memref<128x96xbf16>)
    outs(%c : memref<64x96xf32>)
  return
}

// -----

/// Accumulating into C (no xla.amx_zeros): accumulate 1.
// CHECK-LABEL: func.func @into_c
// CHECK: func.func private @xla_amx_matmul_
// CHECK: arith.constant 1 : i64
// CHECK: func.call @xlac_ukernel_amx_bf16_32x32
func.func @into_c(%a: memref<64x128xbf16>, %b: memref<128x96xbf16>, %c: memref<64x96xf32>) {
  linalg.matmul {xla.amx} ins(%a, %b : memref<64x128xbf16>, memref<128x96xbf16>)
    outs(%c : memref<64x96xf32>)
  return
}

// -----

/// Not a multiple of 32: left a plain matmul (unmarked), its zeros a fill.
// CHECK-LABEL: func.func @ragged
// CHECK: linalg.fill
// CHECK: linalg.matmul ins
// CHECK-NOT: xlac_ukernel_amx
func.func @ragged(%a: memref<60x128xbf16>, %b: memref<128x96xbf16>, %c: memref<60x96xf32>) {
  linalg.matmul {xla.amx, xla.amx_zeros} ins(%a, %b : memref<60x128xbf16>, memref<128x96xbf16>)
    outs(%c : memref<60x96xf32>)
  return
}

// -----

/// A batch matmul: the batch is the thread loop's first dim (5 iterations
/// fill 2 threads: one group of all 3 chunks each).
// CHECK-LABEL: func.func @batch
// CHECK: func.func private @xla_amx_matmul_
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (5, 1, 1)
// CHECK: func.call @xlac_ukernel_amx_bf16_32x32
func.func @batch(%a: memref<5x64x128xbf16>, %b: memref<5x128x96xbf16>, %c: memref<5x64x96xf32>) {
  linalg.batch_matmul {xla.amx, xla.amx_zeros} ins(%a, %b : memref<5x64x128xbf16>, memref<5x128x96xbf16>)
    outs(%c : memref<5x64x96xf32>)
  return
}

// -----

/// The marked elementwise consumer of C (a ReLU rounded to bf16) runs in the
/// matmul's chunks: a no_inline call after each kernel call, over the chunk's
/// rows, two 16-lane vectors of the same ops at a time; the consumer is gone.
// CHECK-LABEL: func.func @epilogue
// CHECK-NOT: linalg.generic
// CHECK: call @xla_amx_matmul_[[N:.*]](%arg0, %arg1, %arg2, %arg3)
// CHECK: func.func private @xla_amx_matmul_[[N]](
// CHECK: scf.forall
// CHECK: func.func private @xla_amx_matmul_[[N]]_group(
// CHECK: func.call @xlac_ukernel_amx_bf16_32x32
// CHECK-NEXT: func.call @xla_amx_matmul_[[N]]_epilogue({{.*}}) {no_inline}
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK: func.func private @xla_amx_matmul_[[N]]_epilogue(
// CHECK: vector.load {{.*}} vector<16xf32>
// CHECK-NEXT: arith.maximumf {{.*}} : vector<16xf32>
// CHECK-NEXT: arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT: vector.store {{.*}} vector<16xbf16>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @epilogue(%a: memref<64x128xbf16>, %b: memref<128x96xbf16>, %c: memref<64x96xf32>,
                    %o: memref<64x96xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.matmul {xla.amx, xla.amx_zeros} ins(%a, %b : memref<64x128xbf16>, memref<128x96xbf16>)
    outs(%c : memref<64x96xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x96xf32>) outs(%o : memref<64x96xbf16>) attrs = {xla.amx_epilogue} {
  ^bb0(%x: f32, %y: bf16):
    %r = arith.maximumf %x, %zero : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

/// A consumer writing into the matmul's A (x = relu(x @ w) after buffer
/// reuse) would overwrite rows other chunks still read: it runs in a second
/// thread loop, over blocks of 32 whole rows, after the matmul's.
// CHECK-LABEL: func.func @epilogue_into_a
// CHECK: func.func private @xla_amx_matmul_[[N:.*]](
// CHECK: scf.forall
// CHECK: func.call @xla_amx_matmul_[[N]]_group({{.*}}) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: scf.forall (%{{.*}}) in (2)
// CHECK: func.call @xla_amx_matmul_[[N]]_epilogue({{.*}}) {no_inline}
// CHECK: func.func private @xla_amx_matmul_[[N]]_group(
// CHECK: func.call @xlac_ukernel_amx_bf16_32x32
// CHECK-NEXT: }
// CHECK-NEXT: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @epilogue_into_a(%a: memref<64x128xbf16>, %b: memref<128x128xbf16>, %c: memref<64x128xf32>) {
  linalg.matmul {xla.amx, xla.amx_zeros} ins(%a, %b : memref<64x128xbf16>, memref<128x128xbf16>)
    outs(%c : memref<64x128xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x128xf32>) outs(%a : memref<64x128xbf16>) attrs = {xla.amx_epilogue} {
  ^bb0(%x: f32, %y: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

/// Groups of eight column chunks or more (32 chunks in 2 groups: an
/// iteration for each of 2 threads): each iteration packs its rows of A
/// into a temporary of its own in tile order, the kernel calls of its chunks
/// get its address and lda 0 (packed), and it frees the temporary after them.
/// No thread loop but the one.
// CHECK-LABEL: func.func @packed_a
// CHECK: func.func private @xla_amx_matmul_[[N:.*]](
// CHECK: %[[G:.*]] = arith.constant 512 : index
// CHECK: scf.forall (%{{.*}}, %[[GI:.*]]) in (1, 2)
// CHECK-NOT: scf.forall
// CHECK: %[[FIRST:.*]] = arith.muli %[[GI]], %[[G]] : index
// CHECK: func.call @xla_amx_matmul_[[N]]_group({{.*}}, %[[FIRST]]) {no_inline}
// CHECK-NOT: scf.forall
// CHECK: func.func private @xla_amx_matmul_[[N]]_group(
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xbf16>
// CHECK: call @xla_amx_matmul_[[N]]_pack_a(%{{.*}}, %[[P]], %{{.*}}, %{{.*}}) {no_inline}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// CHECK: %[[LDA:.*]] = arith.constant 0 : i64
// CHECK: func.call @xlac_ukernel_amx_bf16_32x32(%{{.*}}, %{{.*}}, %{{.*}}, %[[LDA]],
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[P]]
// CHECK-NEXT: return
// CHECK: func.func private @xla_amx_matmul_[[N]]_pack_a(
// CHECK: vector.load {{.*}} vector<32xbf16>
// CHECK: vector.store {{.*}} : memref<8192xbf16>, vector<32xbf16>
func.func @packed_a(%a: memref<64x128xbf16>, %b: memref<128x1024xbf16>, %c: memref<64x1024xf32>) {
  linalg.matmul {xla.amx, xla.amx_zeros} ins(%a, %b : memref<64x128xbf16>, memref<128x1024xbf16>)
    outs(%c : memref<64x1024xf32>)
  return
}

// -----

/// The first matmul's epilogue writes a temporary only the second matmul
/// reads, as its A, and the second packs its A (groups of 8 chunks or more):
/// the epilogue stores it in the packed tile order (row er's 16 columns from
/// ec at 32 k (er / 32) + 32 ec + 32 (er % 32)), aligned to 64 bytes, and the
/// second matmul's iterations read it in place (lda 0) with no packing of
/// their own; the first still packs its A.
// CHECK-LABEL: func.func @handoff
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64x1024xbf16>
// CHECK: func.func private @xla_amx_matmul_[[N:.*]]_group(
// CHECK: call @xla_amx_matmul_[[N]]_pack_a
// CHECK: func.func private @xla_amx_matmul_[[N]]_epilogue(
// CHECK: %[[K32:.*]] = arith.constant 32768 : index
// CHECK: %[[OF:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<64x1024xbf16> into memref<65536xbf16>
// CHECK: arith.muli %{{.*}}, %[[K32]] : index
// CHECK: vector.store %{{.*}}, %[[OF]][%{{.*}}] : memref<65536xbf16>, vector<16xbf16>
// CHECK: vector.store %{{.*}}, %[[OF]][%{{.*}}] : memref<65536xbf16>, vector<16xbf16>
// CHECK: func.func private @xla_amx_matmul_[[N]]_pack_a(
// CHECK: func.func private @xla_amx_matmul_[[M:.*]]_group(
// CHECK-NOT: memref.alloc
// CHECK-NOT: _pack_a
// CHECK: scf.for
// CHECK: %[[AT:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT: %[[LDA:.*]] = arith.constant 0 : i64
// CHECK: func.call @xlac_ukernel_amx_bf16_32x32(%{{.*}}, %{{.*}}, %[[AT]], %[[LDA]],
// CHECK-NOT: memref.dealloc
// CHECK: return
// CHECK-NOT: func.func private @xla_amx_matmul_[[M]]_pack_a(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @handoff(%a: memref<64x128xbf16>, %b: memref<128x1024xbf16>, %w: memref<1024x1024xbf16>,
                   %d: memref<64x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<64x1024xf32>
  linalg.matmul {xla.amx, xla.amx_zeros} ins(%a, %b : memref<64x128xbf16>, memref<128x1024xbf16>)
    outs(%c : memref<64x1024xf32>)
  %h = memref.alloc() : memref<64x1024xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x1024xf32>) outs(%h : memref<64x1024xbf16>) attrs = {xla.amx_epilogue} {
  ^bb0(%x: f32, %y: bf16):
    %r = arith.maximumf %x, %zero : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<64x1024xf32>
  linalg.matmul {xla.amx, xla.amx_zeros} ins(%h, %w : memref<64x1024xbf16>, memref<1024x1024xbf16>)
    outs(%d : memref<64x1024xf32>)
  memref.dealloc %h : memref<64x1024xbf16>
  return
}
