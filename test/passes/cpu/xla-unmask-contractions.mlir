// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-unmask-contractions)' --split-input-file | FileCheck %s

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

/// The rows a register tile leaves over: every k lane is on, so the tile is
/// computed whole (its off rows are never stored).
// CHECK-LABEL: func.func @rows_left_over
// CHECK-NOT: vector.mask
// CHECK: %[[R:.*]] = vector.contract {{.*}} %arg1, %arg2, %arg3 : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: return %[[R]]
func.func @rows_left_over(%rows: index, %a: vector<8x1xf32>, %b: vector<1x32xf32>,
                          %c: vector<8x32xf32>) -> vector<8x32xf32> {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %m = vector.create_mask %rows, %c32, %c1 : vector<8x32x1xi1>
  %r = vector.mask %m { vector.contract {indexing_maps = [#a, #b, #c],
         iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>}
         %a, %b, %c : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32> }
       : vector<8x32x1xi1> -> vector<8x32xf32>
  return %r : vector<8x32xf32>
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

/// A constant mask, full along k: unmasked too.
// CHECK-LABEL: func.func @constant_mask
// CHECK-NOT: vector.mask
// CHECK: vector.contract
func.func @constant_mask(%a: vector<8x4xf32>, %b: vector<4x32xf32>,
                         %c: vector<8x32xf32>) -> vector<8x32xf32> {
  %m = vector.constant_mask [5, 32, 4] : vector<8x32x4xi1>
  %r = vector.mask %m { vector.contract {indexing_maps = [#a, #b, #c],
         iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>}
         %a, %b, %c : vector<8x4xf32>, vector<4x32xf32> into vector<8x32xf32> }
       : vector<8x32x4xi1> -> vector<8x32xf32>
  return %r : vector<8x32xf32>
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

/// Reduced lanes off (a runtime count, or a constant short of k): the sum
/// must skip them, so the mask stays.
// CHECK-LABEL: func.func @reduced_lanes_off
// CHECK: vector.mask %{{.*}} { vector.contract
// CHECK: vector.mask %{{.*}} { vector.contract
func.func @reduced_lanes_off(%depth: index, %a: vector<8x4xf32>, %b: vector<4x32xf32>,
                             %c: vector<8x32xf32>) -> (vector<8x32xf32>, vector<8x32xf32>) {
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %m = vector.create_mask %c8, %c32, %depth : vector<8x32x4xi1>
  %r = vector.mask %m { vector.contract {indexing_maps = [#a, #b, #c],
         iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>}
         %a, %b, %c : vector<8x4xf32>, vector<4x32xf32> into vector<8x32xf32> }
       : vector<8x32x4xi1> -> vector<8x32xf32>
  %short = vector.constant_mask [8, 32, 3] : vector<8x32x4xi1>
  %s = vector.mask %short { vector.contract {indexing_maps = [#a, #b, #c],
         iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>}
         %a, %b, %c : vector<8x4xf32>, vector<4x32xf32> into vector<8x32xf32> }
       : vector<8x32x4xi1> -> vector<8x32xf32>
  return %r, %s : vector<8x32xf32>, vector<8x32xf32>
}

// -----

/// A masked elementwise op or read is no contraction: left as it is.
// CHECK-LABEL: func.func @masked_read
// CHECK: vector.mask %{{.*}} { vector.transfer_read
func.func @masked_read(%rows: index, %m: memref<8x32xf32>) -> vector<8x32xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %pad = arith.constant 0.0 : f32
  %mask = vector.create_mask %rows, %c32 : vector<8x32xi1>
  %r = vector.mask %mask { vector.transfer_read %m[%c0, %c0], %pad : memref<8x32xf32>, vector<8x32xf32> }
       : vector<8x32xi1> -> vector<8x32xf32>
  return %r : vector<8x32xf32>
}

