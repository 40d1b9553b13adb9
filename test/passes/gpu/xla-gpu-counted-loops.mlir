// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-counted-loops)' --split-input-file | FileCheck %s

#map = affine_map<() -> ()>

/// A counter from 0 while below 10, stepped by 1: an scf.for of 10 trips the
/// host runs, the counter still carried (the body may read it).
// CHECK-LABEL: func.func @fori
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[TEN:.*]] = arith.constant 10 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} = %[[ZERO]] to %[[TEN]] step %[[ONE]] iter_args(%[[I:.*]] = %{{.*}}, %[[X:.*]] = %{{.*}})
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<i64>)
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>)
// CHECK: } {xla.host_loop}
// CHECK-NOT: scf.while
// CHECK: return %[[R]]#1
func.func @fori(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : i64
  %c10 = arith.constant 10 : i64
  %zero = arith.constant dense<0> : tensor<i64>
  %p0 = tensor.empty() : tensor<i1>
  %i0 = tensor.empty() : tensor<i64>
  %x0 = tensor.empty() : tensor<4xf32>
  %r:2 = scf.while (%i = %zero, %v = %x) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
    %p = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%i : tensor<i64>) outs(%p0 : tensor<i1>) {
    ^bb0(%in: i64, %out: i1):
      %lt = arith.cmpi slt, %in, %c10 : i64
      linalg.yield %lt : i1
    } -> tensor<i1>
    %b = tensor.extract %p[] : tensor<i1>
    scf.condition(%b) %i, %v : tensor<i64>, tensor<4xf32>
  } do {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    %n = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%i : tensor<i64>) outs(%i0 : tensor<i64>) {
    ^bb0(%in: i64, %out: i64):
      %s = arith.addi %in, %c1 : i64
      linalg.yield %s : i64
    } -> tensor<i64>
    %w = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%x0 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    scf.yield %n, %w : tensor<i64>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}

// -----

#map = affine_map<() -> ()>

/// `7 >= i` from 1 by 3 (the bound first, a constant tensor operand): i = 1, 4, 7.
// CHECK-LABEL: func.func @bound_first
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[THREE]] step
// CHECK: } {xla.host_loop}
func.func @bound_first() -> tensor<i32> {
  %c3 = arith.constant 3 : i32
  %bound = arith.constant dense<7> : tensor<i32>
  %one = arith.constant dense<1> : tensor<i32>
  %p0 = tensor.empty() : tensor<i1>
  %i0 = tensor.empty() : tensor<i32>
  %r = scf.while (%i = %one) : (tensor<i32>) -> tensor<i32> {
    %p = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%bound, %i : tensor<i32>, tensor<i32>) outs(%p0 : tensor<i1>) {
    ^bb0(%n: i32, %in: i32, %out: i1):
      %ge = arith.cmpi sge, %n, %in : i32
      linalg.yield %ge : i1
    } -> tensor<i1>
    %b = tensor.extract %p[] : tensor<i1>
    scf.condition(%b) %i : tensor<i32>
  } do {
  ^bb0(%i: tensor<i32>):
    %n = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%i : tensor<i32>) outs(%i0 : tensor<i32>) {
    ^bb0(%in: i32, %out: i32):
      %s = arith.addi %c3, %in : i32
      linalg.yield %s : i32
    } -> tensor<i32>
    scf.yield %n : tensor<i32>
  }
  return %r : tensor<i32>
}

// -----

#map = affine_map<() -> ()>

/// A bound read from an argument: the trip count is the device's; the while stays.
// CHECK-LABEL: func.func @data_dependent
// CHECK: scf.while
// CHECK-NOT: scf.for
func.func @data_dependent(%n: tensor<i32>) -> tensor<i32> {
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0> : tensor<i32>
  %p0 = tensor.empty() : tensor<i1>
  %i0 = tensor.empty() : tensor<i32>
  %r = scf.while (%i = %zero) : (tensor<i32>) -> tensor<i32> {
    %p = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%i, %n : tensor<i32>, tensor<i32>) outs(%p0 : tensor<i1>) {
    ^bb0(%in: i32, %bound: i32, %out: i1):
      %lt = arith.cmpi slt, %in, %bound : i32
      linalg.yield %lt : i1
    } -> tensor<i1>
    %b = tensor.extract %p[] : tensor<i1>
    scf.condition(%b) %i : tensor<i32>
  } do {
  ^bb0(%i: tensor<i32>):
    %n1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%i : tensor<i32>) outs(%i0 : tensor<i32>) {
    ^bb0(%in: i32, %out: i32):
      %s = arith.addi %in, %c1 : i32
      linalg.yield %s : i32
    } -> tensor<i32>
    scf.yield %n1 : tensor<i32>
  }
  return %r : tensor<i32>
}

// -----

#map = affine_map<() -> ()>

/// Counting to 127 by 100 in i8 would wrap around: left to the device.
// CHECK-LABEL: func.func @wraps
// CHECK: scf.while
func.func @wraps() -> tensor<i8> {
  %c100 = arith.constant 100 : i8
  %c127 = arith.constant 127 : i8
  %zero = arith.constant dense<0> : tensor<i8>
  %p0 = tensor.empty() : tensor<i1>
  %i0 = tensor.empty() : tensor<i8>
  %r = scf.while (%i = %zero) : (tensor<i8>) -> tensor<i8> {
    %p = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%i : tensor<i8>) outs(%p0 : tensor<i1>) {
    ^bb0(%in: i8, %out: i1):
      %lt = arith.cmpi slt, %in, %c127 : i8
      linalg.yield %lt : i1
    } -> tensor<i1>
    %b = tensor.extract %p[] : tensor<i1>
    scf.condition(%b) %i : tensor<i8>
  } do {
  ^bb0(%i: tensor<i8>):
    %n = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%i : tensor<i8>) outs(%i0 : tensor<i8>) {
    ^bb0(%in: i8, %out: i8):
      %s = arith.addi %in, %c100 : i8
      linalg.yield %s : i8
    } -> tensor<i8>
    scf.yield %n : tensor<i8>
  }
  return %r : tensor<i8>
}
