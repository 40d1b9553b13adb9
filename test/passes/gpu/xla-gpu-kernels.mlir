// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-kernels,inline)' --split-input-file | FileCheck %s

/// Elementwise: one thread per element, 256-thread blocks, a bounds check.
// CHECK-LABEL: func.func @add
// CHECK: %[[GRID:.*]] = arith.constant 4 : index
// CHECK: %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[BLOCK]],
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: memref.store
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
