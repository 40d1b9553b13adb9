// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-scalar-loop-carries)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-scalar-loop-carries,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},canonicalize)' --split-input-file | FileCheck %s --check-prefix=BUF

/// lax.scan(lambda c, e: (c + e, c * e), 0.0, v): the counter and the scalar
/// carry become i32 and f32 carries, the compare, add, multiply and increment
/// scalar ops, the element the scan writes one tensor.insert.
// CHECK-LABEL: func.func @scan
// CHECK: %[[I0:.*]] = tensor.extract %{{.*}}[] : tensor<i32>
// CHECK: %[[C0:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: scf.while (%[[I:.*]] = %[[I0]], %[[C:.*]] = %[[C0]], %{{.*}} = %{{.*}}) : (i32, f32, tensor<16xf32>) -> (i32, f32, tensor<16xf32>)
// CHECK-NEXT: %[[P:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : i32
// CHECK-NEXT: scf.condition(%[[P]])
// CHECK: ^bb0(%[[J:.*]]: i32, %[[D:.*]]: f32, %[[YS:.*]]: tensor<16xf32>):
// CHECK-NOT: linalg.generic
// CHECK: %[[E:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: %[[SUM:.*]] = arith.addf %[[D]], %[[E]] : f32
// CHECK: %[[PRODUCT:.*]] = arith.mulf %[[D]], %{{.*}} : f32
// CHECK: %[[W:.*]] = tensor.insert %[[PRODUCT]] into %[[YS]][%{{.*}}] : tensor<16xf32>
// CHECK: %[[NEXT:.*]] = arith.addi %[[J]], %{{.*}} : i32
// CHECK: scf.yield %[[NEXT]], %[[SUM]], %[[W]] : i32, f32, tensor<16xf32>
/// The counter is not read after the loop: no tensor of it there.
// CHECK-NOT: tensor.from_elements %{{.*}}#0
// CHECK: %[[R:.*]] = tensor.from_elements %{{.*}}#1 : tensor<f32>
// CHECK-NOT: tensor.from_elements
// CHECK: return %[[R]], %{{.*}}#2
/// Bufferized: no buffer, copy or allocation in the loop, one store per trip.
// BUF-LABEL: func.func @scan
// BUF: scf.while
// BUF-SAME: (i32, f32) -> (i32, f32)
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: memref.store
// BUF: scf.yield
#map = affine_map<() -> ()>
#map1 = affine_map<(d0) -> ()>
#map2 = affine_map<(d0) -> (d0)>
func.func @scan(%arg0: tensor<16xf32> {bufferization.writable = false}, %ys: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %c1_i32 = arith.constant 1 : i32
  %c15 = arith.constant 15 : index
  %c0 = arith.constant 0 : index
  %c16_i32 = arith.constant 16 : i32
  %cst = arith.constant dense<0> : tensor<i32>
  %cst_0 = arith.constant dense<0.000000e+00> : tensor<f32>
  %2 = tensor.empty() : tensor<i1>
  %3 = tensor.empty() : tensor<f32>
  %4 = tensor.empty() : tensor<1xf32>
  %5 = tensor.empty() : tensor<i32>
  %6:3 = scf.while (%arg1 = %cst, %arg2 = %cst_0, %arg3 = %ys) : (tensor<i32>, tensor<f32>, tensor<16xf32>) -> (tensor<i32>, tensor<f32>, tensor<16xf32>) {
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%arg1 : tensor<i32>) outs(%2 : tensor<i1>) {
    ^bb0(%in: i32, %out: i1):
      %8 = arith.cmpi slt, %in, %c16_i32 : i32
      linalg.yield %8 : i1
    } -> tensor<i1>
    %extracted = tensor.extract %7[] : tensor<i1>
    scf.condition(%extracted) %arg1, %arg2, %arg3 : tensor<i32>, tensor<f32>, tensor<16xf32>
  } do {
  ^bb0(%arg1: tensor<i32>, %arg2: tensor<f32>, %arg3: tensor<16xf32>):
    %extracted = tensor.extract %arg1[] : tensor<i32>
    %7 = arith.index_cast %extracted : i32 to index
    %8 = arith.maxsi %7, %c0 : index
    %9 = arith.minsi %8, %c15 : index
    %extracted_slice = tensor.extract_slice %arg0[%9] [1] [1] : tensor<16xf32> to tensor<1xf32>
    %collapsed = tensor.collapse_shape %extracted_slice [] : tensor<1xf32> into tensor<f32>
    %10 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%arg2, %collapsed : tensor<f32>, tensor<f32>) outs(%3 : tensor<f32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %13 = arith.addf %in, %in_1 : f32
      linalg.yield %13 : f32
    } -> tensor<f32>
    %11 = linalg.generic {indexing_maps = [#map1, #map1, #map2], iterator_types = ["parallel"]} ins(%arg2, %collapsed : tensor<f32>, tensor<f32>) outs(%4 : tensor<1xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %13 = arith.mulf %in, %in_1 : f32
      linalg.yield %13 : f32
    } -> tensor<1xf32>
    %inserted_slice = tensor.insert_slice %11 into %arg3[%9] [1] [1] : tensor<1xf32> into tensor<16xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%arg1 : tensor<i32>) outs(%5 : tensor<i32>) {
    ^bb0(%in: i32, %out: i32):
      %13 = arith.addi %in, %c1_i32 : i32
      linalg.yield %13 : i32
    } -> tensor<i32>
    scf.yield %12, %10, %inserted_slice : tensor<i32>, tensor<f32>, tensor<16xf32>
  }
  return %6#1, %6#2 : tensor<f32>, tensor<16xf32>
}

// -----

/// A 0-d carry the body passes to a call: a tensor again there (from_elements),
/// carried as its element all the same.
// CHECK-LABEL: func.func @called
// CHECK: scf.while (%[[X:.*]] = %{{.*}}) : (f32) -> f32
// CHECK: ^bb0(%[[Y:.*]]: f32):
// CHECK: %[[T:.*]] = tensor.from_elements %[[Y]] : tensor<f32>
// CHECK: call @step(%[[T]])
func.func private @step(%x: tensor<f32>) -> tensor<f32>
func.func @called(%x0: tensor<f32>, %n: f32) -> tensor<f32> {
  %0 = scf.while (%x = %x0) : (tensor<f32>) -> tensor<f32> {
    %e = tensor.extract %x[] : tensor<f32>
    %p = arith.cmpf olt, %e, %n : f32
    scf.condition(%p) %x : tensor<f32>
  } do {
  ^bb0(%x: tensor<f32>):
    %y = func.call @step(%x) : (tensor<f32>) -> tensor<f32>
    scf.yield %y : tensor<f32>
  }
  return %0 : tensor<f32>
}
