// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-integer-arithmetic)' --split-input-file | FileCheck %s

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
