// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-structural)' --split-input-file | FileCheck %s

/// get_tuple_element of a tuple reads the element directly, through nested
/// tuples; the tuples are then unused and erased.
// CHECK-LABEL: func.func @nested_tuples
// CHECK-SAME: (%[[A:.*]]: tensor<2xf64>, %[[B:.*]]: tensor<i64>)
// CHECK-NOT: stablehlo.tuple
// CHECK-NOT: stablehlo.get_tuple_element
// CHECK: return %[[A]], %[[B]] : tensor<2xf64>, tensor<i64>
func.func @nested_tuples(%a: tensor<2xf64>, %b: tensor<i64>) -> (tensor<2xf64>, tensor<i64>) {
  %inner = stablehlo.tuple %b : tuple<tensor<i64>>
  %outer = stablehlo.tuple %a, %inner : tuple<tensor<2xf64>, tuple<tensor<i64>>>
  %x = stablehlo.get_tuple_element %outer[0] : (tuple<tensor<2xf64>, tuple<tensor<i64>>>) -> tensor<2xf64>
  %t = stablehlo.get_tuple_element %outer[1] : (tuple<tensor<2xf64>, tuple<tensor<i64>>>) -> tuple<tensor<i64>>
  %y = stablehlo.get_tuple_element %t[0] : (tuple<tensor<i64>>) -> tensor<i64>
  return %x, %y : tensor<2xf64>, tensor<i64>
}

// -----

/// Tuples inside a while body fold the same way.
// CHECK-LABEL: func.func @tuple_in_body
// CHECK: stablehlo.while
// CHECK-NOT: stablehlo.tuple
// CHECK: %[[SUM:.*]] = stablehlo.add %[[V:.*]], %[[V]]
// CHECK: stablehlo.return %[[SUM]]
func.func @tuple_in_body(%x: tensor<f32>, %p: tensor<i1>) -> tensor<f32> {
  %r = stablehlo.while(%v = %x) : tensor<f32>
  cond {
    stablehlo.return %p : tensor<i1>
  } do {
    %t = stablehlo.tuple %v, %v : tuple<tensor<f32>, tensor<f32>>
    %a = stablehlo.get_tuple_element %t[1] : (tuple<tensor<f32>, tensor<f32>>) -> tensor<f32>
    %s = stablehlo.add %a, %a : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

/// optimization_barrier forwards its operands.
// CHECK-LABEL: func.func @barrier
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<i32>)
// CHECK-NOT: stablehlo.optimization_barrier
// CHECK: %[[E:.*]] = stablehlo.exponential %[[A]]
// CHECK: return %[[E]], %[[B]]
func.func @barrier(%a: tensor<4xf32>, %b: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  %x, %y = stablehlo.optimization_barrier %a, %b : tensor<4xf32>, tensor<i32>
  %e = stablehlo.exponential %x : tensor<4xf32>
  return %e, %y : tensor<4xf32>, tensor<i32>
}

// -----

/// A dot_general algorithm hint is dropped; the dimensions stay.
// CHECK-LABEL: func.func @dot_algorithm
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [1]
// CHECK-NOT: algorithm
func.func @dot_algorithm(%a: tensor<2x2x2xi64>, %b: tensor<2x2x2xi64>) -> tensor<2x2x2xi64> {
  %r = stablehlo.dot_general %a, %b,
    batching_dims = [0] x [0],
    contracting_dims = [2] x [1],
    algorithm = <
      lhs_precision_type = tf32,
      rhs_precision_type = tf32,
      accumulation_type = f32,
      lhs_component_count = 1,
      rhs_component_count = 1,
      num_primitive_operations = 1,
      allow_imprecise_accumulation = false
    > : (tensor<2x2x2xi64>, tensor<2x2x2xi64>) -> tensor<2x2x2xi64>
  return %r : tensor<2x2x2xi64>
}
