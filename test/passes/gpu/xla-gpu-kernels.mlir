// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-kernels,inline)' --split-input-file | FileCheck %s

/// Elementwise: 16 bytes per thread (4 x f32 as one aligned vector load of each
/// input and one vector store), 256-thread blocks, a bounds check.
// CHECK-LABEL: func.func @add
// CHECK: %[[GRID:.*]] = arith.constant 1 : index
// CHECK: %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[BLOCK]],
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: vector.load %arg0[%{{.*}}] {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>
// CHECK: vector.load %arg1
// CHECK-COUNT-4: arith.addf
// CHECK: vector.from_elements
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}] {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>
// CHECK-NOT: linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @add(%a: memref<1000xf32>, %b: memref<1000xf32>, %c: memref<1000xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : memref<1000xf32>, memref<1000xf32>) outs(%c : memref<1000xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// Row sum: a block per row, warp shuffles, one value per warp in shared memory;
/// the init fill before it is folded in (no second kernel).
// CHECK-LABEL: func.func @row_sum
// CHECK-COUNT-1: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor
// CHECK: memref.store
// CHECK-NOT: memref.load %arg1
// CHECK-NOT: gpu.launch
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
#scalar = affine_map<(d0) -> ()>
#row = affine_map<(d0) -> (d0)>
func.func @row_sum(%a: memref<64x1024xf32>, %r: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#scalar, #row], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%r : memref<64xf32>) {
  ^bb0(%z: f32, %o: f32):
    linalg.yield %z : f32
  }
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x1024xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// A full reduction with few outputs is split over blocks: partial results, then a second launch.
// CHECK-LABEL: func.func @full_max
// CHECK: memref.alloc() : memref<1x{{[0-9]+}}xf32>
// CHECK: gpu.launch
// CHECK: arith.maximumf
// CHECK: gpu.launch
// CHECK: arith.maximumf
#all = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
func.func @full_max(%a: memref<1048576xf32>, %r: memref<f32>) {
  linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction"]}
      ins(%a : memref<1048576xf32>) outs(%r : memref<f32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %o : f32
    linalg.yield %m : f32
  }
  return
}

// -----

/// Softmax's multi-output fusion: exp(x - max) and its row sum are one kernel
/// that stores e at every point and folds it (a block per row). Bufferization
/// reused the maxima's buffer for the sums: the zero fill between them becomes
/// the kernel's start value, and each block reads the one maximum it overwrites.
// CHECK-LABEL: func.func @exp_and_row_sum
// CHECK-COUNT-1: gpu.launch
// CHECK: scf.for
// CHECK: vector.load %arg0
// CHECK: math.exp
// CHECK: vector.store %{{.*}}, %arg1[
// CHECK: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %arg2[
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.generic
#in2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
#fill_in = affine_map<(d0) -> ()>
#fill_out = affine_map<(d0) -> (d0)>
func.func @exp_and_row_sum(%x: memref<64x1024xf32>, %e: memref<64x1024xf32>, %m: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#in2, #row2, #in2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<64x1024xf32>, memref<64xf32>) outs(%e : memref<64x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %ex = math.exp %d : f32
    linalg.yield %ex : f32
  }
  linalg.generic {indexing_maps = [#fill_in, #fill_out], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%m : memref<64xf32>) {
  ^bb0(%z: f32, %o: f32):
    linalg.yield %z : f32
  }
  linalg.generic {indexing_maps = [#in2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%e : memref<64x1024xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// The producer reads another row's value of the buffer the sums go to: no merge
/// (a block would overwrite a maximum another block still reads); the fill still
/// folds into the reduction.
// CHECK-LABEL: func.func @reads_other_rows
// CHECK: gpu.launch
// CHECK: vector.store %{{.*}}, %arg1[
// CHECK: gpu.launch
// CHECK-SAME: workgroup
// CHECK-NOT: gpu.launch
#in2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
#fill_in = affine_map<(d0) -> ()>
#fill_out = affine_map<(d0) -> (d0)>
#flip = affine_map<(d0, d1) -> (63 - d0)>
func.func @reads_other_rows(%x: memref<64x1024xf32>, %e: memref<64x1024xf32>, %m: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#in2, #flip, #in2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<64x1024xf32>, memref<64xf32>) outs(%e : memref<64x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#fill_in, #fill_out], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%m : memref<64xf32>) {
  ^bb0(%z: f32, %o: f32):
    linalg.yield %z : f32
  }
  linalg.generic {indexing_maps = [#in2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%e : memref<64x1024xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// In host control flow's regions (a while's condition and body) ops become
/// kernels as at the top: the "any" reduction of the condition a block reduction
/// (its i1 identity, false, written so that it parses), the body's elementwise op
/// a loop kernel.
// CHECK-LABEL: func.func @while_regions
// CHECK: scf.while
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<256xi1, #gpu.address_space<workgroup>>)
// CHECK: arith.ori
// CHECK: scf.condition
// CHECK: do
// CHECK: gpu.launch
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @while_regions(%x: memref<1000xf32>, %flags: memref<1000xi1>, %any: memref<i1>) -> memref<1000xf32> {
  %r = scf.while (%v = %x) : (memref<1000xf32>) -> memref<1000xf32> {
    linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
        ins(%flags : memref<1000xi1>) outs(%any : memref<i1>) {
    ^bb0(%f: i1, %o: i1):
      %e = arith.ori %f, %o : i1
      linalg.yield %e : i1
    }
    %p = memref.load %any[] : memref<i1>
    scf.condition(%p) %v : memref<1000xf32>
  } do {
  ^bb0(%v: memref<1000xf32>):
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%v : memref<1000xf32>) outs(%v : memref<1000xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %a : f32
      linalg.yield %m : f32
    }
    scf.yield %v : memref<1000xf32>
  }
  return %r : memref<1000xf32>
}

// -----

/// An innermost extent no vector width divides, and a view at an odd offset: scalar
/// loads and stores, a thread per element.
// CHECK-LABEL: func.func @odd
// CHECK: gpu.launch
// CHECK-NOT: vector.load
// CHECK: memref.load %arg0
// CHECK: memref.store
// CHECK-LABEL: func.func @odd_view
// CHECK: gpu.launch
// CHECK-NOT: vector.load
// CHECK: memref.load %arg0
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @odd(%a: memref<3x7xf32>, %c: memref<3x7xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<3x7xf32>) outs(%c : memref<3x7xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}
func.func @odd_view(%a: memref<4x8xf32, strided<[9, 1], offset: 1>>, %c: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32, strided<[9, 1], offset: 1>>) outs(%c : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

/// A transpose: 32x8-thread blocks stage 32x33 tiles in shared memory, read along the
/// input's rows, a barrier, then written along the output's rows.
// CHECK-LABEL: func.func @transpose
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<32x33xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<32x33xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load %{{.*}} : memref<32x33xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %arg1
#tr = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @transpose(%a: memref<64x96xf32>, %c: memref<96x64xf32>) {
  linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x96xf32>) outs(%c : memref<96x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

/// A column sum: consecutive threads take 4 consecutive columns each (vector loads
/// along the rows), the rows split over thread groups into a partial buffer, a
/// second launch folds the partials.
// CHECK-LABEL: func.func @column_sum
// CHECK: memref.alloc() : memref<{{[0-9]+}}x2048xf32>
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: vector.load %arg0
// CHECK: vector.store
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %arg1
#cols = affine_map<(d0, d1) -> (d1, d0)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @column_sum(%a: memref<512x2048xf32>, %c: memref<2048xf32>) {
  linalg.generic {indexing_maps = [#cols, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<512x2048xf32>) outs(%c : memref<2048xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
