// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-check-shape-assertions)' --split-input-file --verify-diagnostics | FileCheck %s

/// A jax.export check whose predicate has folded to true goes away.
// CHECK-LABEL: func.func @main
// CHECK-NOT: shape_assertion
func.func @main(%arg0: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %true = stablehlo.constant dense<true> : tensor<i1>
  %c = stablehlo.constant dense<3> : tensor<i32>
  stablehlo.custom_call @shape_assertion(%true, %c) {api_version = 2 : i32, error_message = "b = {0}", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %arg0 : tensor<6x4xf32>
}

// -----

/// While the entry takes `?` dims it stays, for the specialization to decide.
// CHECK-LABEL: func.func @main
// CHECK: custom_call @shape_assertion
func.func @main(%arg0: tensor<?x4xf32>, %p: tensor<i1>) -> tensor<?x4xf32> {
  stablehlo.custom_call @shape_assertion(%p) {api_version = 2 : i32, error_message = "b >= 1", has_side_effect = true} : (tensor<i1>) -> ()
  return %arg0 : tensor<?x4xf32>
}

// -----

/// Folded to false: jax's message, with the dims' values.
func.func @main(%arg0: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %false = stablehlo.constant dense<false> : tensor<i1>
  %c = stablehlo.constant dense<1> : tensor<i32>
  // expected-error @+1 {{shape assertion failed: Division had remainder 1 when computing 'b'}}
  stablehlo.custom_call @shape_assertion(%false, %c) {api_version = 2 : i32, error_message = "Division had remainder {0} when computing 'b'", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %arg0 : tensor<5x4xf32>
}

// -----

/// Not folded in a program of static shapes: undecidable, said so.
func.func @main(%arg0: tensor<5x4xf32>, %p: tensor<i1>) -> tensor<5x4xf32> {
  // expected-error @+1 {{a shape assertion of jax.export could not be decided at compile time: b >= 1}}
  stablehlo.custom_call @shape_assertion(%p) {api_version = 2 : i32, error_message = "b >= 1", has_side_effect = true} : (tensor<i1>) -> ()
  return %arg0 : tensor<5x4xf32>
}
