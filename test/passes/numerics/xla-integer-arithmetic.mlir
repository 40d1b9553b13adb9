// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-integer-arithmetic)' --split-input-file | FileCheck %s

/// Boolean add is or, multiply is and; other integer types keep their arithmetic.
// CHECK-LABEL: func.func @elementwise
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
// CHECK: stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.or across dimensions = [1]
// CHECK-NOT: stablehlo.add
func.func @any(%x: tensor<2x3xi1>, %init: tensor<i1>) -> tensor<2xi1> {
  %r = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>
  return %r : tensor<2xi1>
}

// -----

/// Integer power squares once per bit of the exponent (8 for i8); a negative
/// signed exponent keeps upstream's lowering.
// CHECK-LABEL: func.func private @xla_integer_power_0(
// CHECK-COUNT-8: stablehlo.shift_right_logical
// CHECK: %[[NEGATIVE:.*]] = stablehlo.compare LT, %arg1
// CHECK: %[[UPSTREAM:.*]] = stablehlo.power %arg0, %arg1 : tensor<4xi8>
// CHECK: stablehlo.select %[[NEGATIVE]], %[[UPSTREAM]]
// CHECK-LABEL: func.func @power
// CHECK: call @xla_integer_power_0(%arg0, %arg1)
func.func @power(%b: tensor<4xi8>, %e: tensor<4xi8>) -> tensor<4xi8> {
  %r = stablehlo.power %b, %e : tensor<4xi8>
  return %r : tensor<4xi8>
}

// -----

/// An unsigned exponent is never negative: no fallback.
// CHECK-LABEL: func.func private @xla_integer_power_0(
// CHECK-COUNT-16: stablehlo.multiply %{{.*}}, %{{.*}} : tensor<3xui16>
// CHECK-NOT: stablehlo.power
// CHECK-LABEL: func.func @unsigned
func.func @unsigned(%b: tensor<3xui16>, %e: tensor<3xui16>) -> tensor<3xui16> {
  %r = stablehlo.power %b, %e : tensor<3xui16>
  return %r : tensor<3xui16>
}
