// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-widen-contractions{keep-narrow=true},xla-mark-contraction-precision)' --split-input-file | FileCheck %s

/// For a library matmul (cuBLASLt): the bf16 operands stay as they are, the dot
/// accumulates into f32 and rounds to bf16 once.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xbf16>, %[[B:.*]]: tensor<8x2xbf16>)
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[A]], %[[B]], contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>
// CHECK: %[[R:.*]] = stablehlo.convert %[[D]] : (tensor<4x2xf32>) -> tensor<4x2xbf16>
// CHECK: return %[[R]]
func.func @dot(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
  return %0 : tensor<4x2xbf16>
}

// -----

/// Mixed operand types are widened as before, and the f32 dot is exact (HIGHEST):
/// no TF32 rounding of what the conversion made exact.
// CHECK-LABEL: func.func @mixed
// CHECK: stablehlo.convert %{{.*}} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: stablehlo.dot_general {{.*}} {xla.precision = "highest"} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
func.func @mixed(%a: tensor<4x8xbf16>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

/// precision = HIGHEST on either operand is marked for the matmul; DEFAULT is not.
// CHECK-LABEL: func.func @precision
// CHECK: stablehlo.dot_general {{.*}} {xla.precision = "highest"}
// CHECK: stablehlo.dot_general
// CHECK-NOT: xla.precision
func.func @precision(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}
