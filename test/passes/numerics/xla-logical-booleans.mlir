// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-logical-booleans)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-logical-booleans,canonicalize)' --split-input-file | FileCheck %s --check-prefix=FOLDED

/// Boolean add is or, multiply is and; other integer types keep their arithmetic.
// CHECK-LABEL: func.func @elementwise
// FOLDED-LABEL: func.func @elementwise
// CHECK: %[[S:.*]] = stablehlo.or %arg0, %arg1 : tensor<4xi1>
// CHECK: %[[P:.*]] = stablehlo.and %[[S]], %arg1 : tensor<4xi1>
// CHECK: stablehlo.add %arg2, %arg2 : tensor<4xi8>
func.func @elementwise(%a: tensor<4xi1>, %b: tensor<4xi1>, %c: tensor<4xi8>) -> (tensor<4xi1>, tensor<4xi8>) {
  %s = stablehlo.add %a, %b : tensor<4xi1>
  %p = stablehlo.multiply %s, %b : tensor<4xi1>
  %q = stablehlo.add %c, %c : tensor<4xi8>
  return %p, %q : tensor<4xi1>, tensor<4xi8>
}

// -----

/// A sum of booleans (a reduction body on scalars) is an any.
// CHECK-LABEL: func.func @any
// FOLDED-LABEL: func.func @any
// CHECK: stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.or across dimensions = [1]
// CHECK-NOT: stablehlo.add
func.func @any(%x: tensor<2x3xi1>, %init: tensor<i1>) -> tensor<2xi1> {
  %r = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>
  return %r : tensor<2xi1>
}

// -----

/// Constants fold as booleans: true + true is true, not the xor canonicalize
/// would make of an i1 add.
// CHECK-LABEL: func.func @constants
// CHECK: stablehlo.or
// CHECK: stablehlo.and
// FOLDED-LABEL: func.func @constants
// FOLDED-DAG: stablehlo.constant dense<true> : tensor<2xi1>
// FOLDED-DAG: stablehlo.constant dense<[true, false]> : tensor<2xi1>
func.func @constants() -> (tensor<2xi1>, tensor<2xi1>) {
  %t = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %u = stablehlo.constant dense<[true, true]> : tensor<2xi1>
  %s = stablehlo.add %t, %u : tensor<2xi1>
  %m = stablehlo.multiply %t, %u : tensor<2xi1>
  return %s, %m : tensor<2xi1>, tensor<2xi1>
}
