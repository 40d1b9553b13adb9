// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-reduce-precision-nans)' --split-input-file | FileCheck %s

/// No mantissa bits: a NaN becomes +inf (the interpreter ignores its sign).
// CHECK-LABEL: func.func private @xla_reduce_precision_0(
// CHECK: %[[R:.*]] = stablehlo.reduce_precision %arg0, format = e5m0 : tensor<4xf32>
// CHECK: %[[NAN:.*]] = stablehlo.compare NE, %arg0, %arg0
// CHECK: %[[INF:.*]] = stablehlo.constant dense<0x7F800000> : tensor<4xf32>
// CHECK: stablehlo.select %[[NAN]], %[[INF]], %[[R]]
// CHECK-LABEL: func.func @no_mantissa
// CHECK: call @xla_reduce_precision_0(%arg0)
func.func @no_mantissa(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = stablehlo.reduce_precision %x, format = e5m0 : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

/// With a mantissa bit a NaN stays a NaN: nothing to do.
// CHECK-LABEL: func.func @one_bit
// CHECK-NEXT: stablehlo.reduce_precision %arg0, format = e5m1 : tensor<4xbf16>
func.func @one_bit(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %r = stablehlo.reduce_precision %x, format = e5m1 : tensor<4xbf16>
  return %r : tensor<4xbf16>
}
