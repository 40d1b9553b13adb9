// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-widen-f8-predicates)' --split-input-file | FileCheck %s

/// An f8 is_finite is asked of the f32 value; wider types are left alone.
// CHECK-LABEL: func.func @is_finite
// CHECK: %[[W:.*]] = stablehlo.convert %arg0 : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
// CHECK: stablehlo.is_finite %[[W]] : (tensor<4xf32>) -> tensor<4xi1>
// CHECK: stablehlo.is_finite %arg1 : (tensor<4xf16>) -> tensor<4xi1>
func.func @is_finite(%x: tensor<4xf8E4M3FN>, %y: tensor<4xf16>) -> (tensor<4xi1>, tensor<4xi1>) {
  %a = stablehlo.is_finite %x : (tensor<4xf8E4M3FN>) -> tensor<4xi1>
  %b = stablehlo.is_finite %y : (tensor<4xf16>) -> tensor<4xi1>
  return %a, %b : tensor<4xi1>, tensor<4xi1>
}
