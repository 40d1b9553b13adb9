// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-share-conv-scratch)' --split-input-file | FileCheck %s

#patch = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d3, d2 + d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

/// Two convolutions' im2col scratch buffers: one allocation the size of the larger
/// (2x4x4x3x3 = 288 elements), each a reinterpret_cast of it; the matmuls unchanged.
/// An allocation another op also reads (%keep) is left its own.
// CHECK-LABEL: func.func @two
// CHECK-NEXT: %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<288xf32>
// CHECK: memref.reinterpret_cast %[[S]] to offset: [0], sizes: [2, 4, 4, 3, 3], strides: [144, 36, 9, 3, 1] : memref<288xf32> to memref<2x4x4x3x3xf32>
// CHECK: linalg.matmul {xla.conv = "conv3x3 im2col"}
// CHECK: memref.reinterpret_cast %[[S]] to offset: [0], sizes: [2, 3, 3, 3, 3], strides: [81, 27, 9, 3, 1] : memref<288xf32> to memref<2x3x3x3x3xf32>
// CHECK: linalg.matmul {xla.conv = "conv3x3 im2col"}
// CHECK: %[[KEEP:.*]] = memref.alloc() : memref<2x3x3x3x3xf32>
// CHECK: memref.copy %[[KEEP]]
func.func @two(%x: memref<2x6x6xf32>, %y: memref<2x5x5xf32>, %w: memref<9x4xf32>, %a: memref<32x4xf32>, %b: memref<18x4xf32>, %c: memref<2x3x3x3x3xf32>) {
  %p = memref.alloc() : memref<2x4x4x3x3xf32>
  linalg.generic {indexing_maps = [#patch, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x6x6xf32>) outs(%p : memref<2x4x4x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %pa = memref.collapse_shape %p [[0, 1, 2], [3, 4]] : memref<2x4x4x3x3xf32> into memref<32x9xf32>
  linalg.matmul {xla.conv = "conv3x3 im2col"} ins(%pa, %w : memref<32x9xf32>, memref<9x4xf32>) outs(%a : memref<32x4xf32>)
  %q = memref.alloc() : memref<2x3x3x3x3xf32>
  linalg.generic {indexing_maps = [#patch, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<2x5x5xf32>) outs(%q : memref<2x3x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %qa = memref.collapse_shape %q [[0, 1, 2], [3, 4]] : memref<2x3x3x3x3xf32> into memref<18x9xf32>
  linalg.matmul {xla.conv = "conv3x3 im2col"} ins(%qa, %w : memref<18x9xf32>, memref<9x4xf32>) outs(%b : memref<18x4xf32>)
  %keep = memref.alloc() : memref<2x3x3x3x3xf32>
  linalg.generic {indexing_maps = [#patch, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<2x5x5xf32>) outs(%keep : memref<2x3x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %ka = memref.collapse_shape %keep [[0, 1, 2], [3, 4]] : memref<2x3x3x3x3xf32> into memref<18x9xf32>
  linalg.matmul {xla.conv = "conv3x3 im2col"} ins(%ka, %w : memref<18x9xf32>, memref<9x4xf32>) outs(%b : memref<18x4xf32>)
  memref.copy %keep, %c : memref<2x3x3x3x3xf32> to memref<2x3x3x3x3xf32>
  return
}

// -----

/// One convolution: its scratch stays as it is.
// CHECK-LABEL: func.func @one
// CHECK-NOT: reinterpret_cast
// CHECK: memref.alloc() : memref<2x4x4x3x3xf32>
func.func @one(%x: memref<2x6x6xf32>, %w: memref<9x4xf32>, %a: memref<32x4xf32>) {
  %p = memref.alloc() : memref<2x4x4x3x3xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d3, d2 + d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x6x6xf32>) outs(%p : memref<2x4x4x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %pa = memref.collapse_shape %p [[0, 1, 2], [3, 4]] : memref<2x4x4x3x3xf32> into memref<32x9xf32>
  linalg.matmul {xla.conv = "conv3x3 im2col"} ins(%pa, %w : memref<32x9xf32>, memref<9x4xf32>) outs(%a : memref<32x4xf32>)
  return
}

// -----

#patch = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d3, d2 + d4)>
#strided = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 2 + d3, d2 * 2 + d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

/// 1x1 windows' patch matrices (strided shortcuts) share an allocation of their own
/// (18 elements), apart from the 3x3 ones' (288): a shortcut and the convolution
/// beside it, reading one input, do not write one scratch.
// CHECK-LABEL: func.func @shortcuts
// CHECK-DAG: %[[WIDE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<288xf32>
// CHECK-DAG: %[[ONE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<18xf32>
// CHECK: memref.reinterpret_cast %[[WIDE]] {{.*}} to memref<2x4x4x3x3xf32>
// CHECK: memref.reinterpret_cast %[[ONE]] {{.*}} to memref<2x3x3x1x1xf32>
// CHECK: memref.reinterpret_cast %[[WIDE]] {{.*}} to memref<2x3x3x3x3xf32>
// CHECK: memref.reinterpret_cast %[[ONE]] {{.*}} to memref<2x2x2x1x1xf32>
func.func @shortcuts(%x: memref<2x6x6xf32>, %y: memref<2x5x5xf32>, %w: memref<9x4xf32>, %v: memref<1x4xf32>,
                     %a: memref<32x4xf32>, %b: memref<18x4xf32>, %c: memref<18x4xf32>, %d: memref<8x4xf32>) {
  %p = memref.alloc() : memref<2x4x4x3x3xf32>
  linalg.generic {indexing_maps = [#patch, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x6x6xf32>) outs(%p : memref<2x4x4x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %pa = memref.collapse_shape %p [[0, 1, 2], [3, 4]] : memref<2x4x4x3x3xf32> into memref<32x9xf32>
  linalg.matmul {xla.conv = "conv3x3 im2col"} ins(%pa, %w : memref<32x9xf32>, memref<9x4xf32>) outs(%a : memref<32x4xf32>)
  %r = memref.alloc() : memref<2x3x3x1x1xf32>
  linalg.generic {indexing_maps = [#strided, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x6x6xf32>) outs(%r : memref<2x3x3x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %ra = memref.collapse_shape %r [[0, 1, 2], [3, 4]] : memref<2x3x3x1x1xf32> into memref<18x1xf32>
  linalg.matmul {xla.conv = "conv1x1/s2 im2col"} ins(%ra, %v : memref<18x1xf32>, memref<1x4xf32>) outs(%c : memref<18x4xf32>)
  %q = memref.alloc() : memref<2x3x3x3x3xf32>
  linalg.generic {indexing_maps = [#patch, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<2x5x5xf32>) outs(%q : memref<2x3x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %qa = memref.collapse_shape %q [[0, 1, 2], [3, 4]] : memref<2x3x3x3x3xf32> into memref<18x9xf32>
  linalg.matmul {xla.conv = "conv3x3 im2col"} ins(%qa, %w : memref<18x9xf32>, memref<9x4xf32>) outs(%b : memref<18x4xf32>)
  %s = memref.alloc() : memref<2x2x2x1x1xf32>
  linalg.generic {indexing_maps = [#strided, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<2x5x5xf32>) outs(%s : memref<2x2x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %sa = memref.collapse_shape %s [[0, 1, 2], [3, 4]] : memref<2x2x2x1x1xf32> into memref<8x1xf32>
  linalg.matmul {xla.conv = "conv1x1/s2 im2col"} ins(%sa, %v : memref<8x1xf32>, memref<1x4xf32>) outs(%d : memref<8x4xf32>)
  return
}
