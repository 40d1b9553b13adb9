// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-expand-complex-ops)' --split-input-file --verify-diagnostics | FileCheck %s

/// Complex maximum is lexicographic: the real part wins, a tie goes to the
/// imaginary part.
// CHECK-LABEL: func.func private @xla_complex_max_0(
// CHECK-SAME: %[[A:.*]]: tensor<4xcomplex<f32>>, %[[B:.*]]: tensor<4xcomplex<f32>>
// CHECK-DAG: %[[AR:.*]] = stablehlo.real %[[A]]
// CHECK-DAG: %[[BR:.*]] = stablehlo.real %[[B]]
// CHECK-DAG: %[[AI:.*]] = stablehlo.imag %[[A]]
// CHECK-DAG: %[[BI:.*]] = stablehlo.imag %[[B]]
// CHECK: %[[GT:.*]] = stablehlo.compare GT, %[[AR]], %[[BR]]
// CHECK: %[[EQ:.*]] = stablehlo.compare EQ, %[[AR]], %[[BR]]
// CHECK: %[[GE:.*]] = stablehlo.compare GE, %[[AI]], %[[BI]]
// CHECK: %[[TIE:.*]] = stablehlo.and %[[EQ]], %[[GE]]
// CHECK: %[[WINS:.*]] = stablehlo.or %[[GT]], %[[TIE]]
// CHECK: %[[R:.*]] = stablehlo.select %[[WINS]], %[[A]], %[[B]]
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @max
// CHECK: call @xla_complex_max_0
// CHECK-NOT: stablehlo.maximum
func.func @max(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %m = stablehlo.maximum %a, %b : tensor<4xcomplex<f32>>
  return %m : tensor<4xcomplex<f32>>
}

// -----

/// Minimum mirrors it; real-valued minimum is left to upstream.
// CHECK-LABEL: func.func private @xla_complex_min_0(
// CHECK: stablehlo.compare LT
// CHECK: stablehlo.compare EQ
// CHECK: stablehlo.compare LE
// CHECK-LABEL: func.func @min
// CHECK: call @xla_complex_min_0
// CHECK: %[[REAL:.*]] = stablehlo.minimum %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: return
func.func @min(%a: tensor<4xcomplex<f64>>, %b: tensor<4xcomplex<f64>>, %c: tensor<4xf32>) -> (tensor<4xcomplex<f64>>, tensor<4xf32>) {
  %m = stablehlo.minimum %a, %b : tensor<4xcomplex<f64>>
  %n = stablehlo.minimum %c, %c : tensor<4xf32>
  return %m, %n : tensor<4xcomplex<f64>>, tensor<4xf32>
}

// -----

/// A bitcast of a complex type to itself is a no-op.
// CHECK-LABEL: func.func @same_type
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xcomplex<f32>>)
// CHECK-NEXT: return %[[X]]
func.func @same_type(%x: tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>> {
  %y = stablehlo.bitcast_convert %x : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
  return %y : tensor<2x3xcomplex<f32>>
}

// -----

/// complex<f64> -> pairs of complex<f32>: each f64 part splits into its low
/// and high 32-bit words.
// CHECK-LABEL: func.func private @xla_complex_bitcast_0(
// CHECK: %[[RE:.*]] = stablehlo.real
// CHECK: %[[BITS:.*]] = stablehlo.bitcast_convert %[[RE]] : (tensor<3xf64>) -> tensor<3xui64>
// CHECK: %[[SHIFT:.*]] = stablehlo.constant dense<32> : tensor<3xui64>
// CHECK: %[[HIGH64:.*]] = stablehlo.shift_right_logical %[[BITS]], %[[SHIFT]]
// CHECK: %[[LOW32:.*]] = stablehlo.convert %[[BITS]] : (tensor<3xui64>) -> tensor<3xui32>
// CHECK: %[[HIGH32:.*]] = stablehlo.convert %[[HIGH64]]
// CHECK: %[[LOW:.*]] = stablehlo.bitcast_convert %[[LOW32]] : (tensor<3xui32>) -> tensor<3xf32>
// CHECK: %[[HIGH:.*]] = stablehlo.bitcast_convert %[[HIGH32]]
// CHECK: stablehlo.complex %[[LOW]], %[[HIGH]] : tensor<3xcomplex<f32>>
// CHECK: stablehlo.concatenate {{.*}} dim = 1 : {{.*}} -> tensor<3x2xcomplex<f32>>
// CHECK-LABEL: func.func @split
// CHECK: call @xla_complex_bitcast_0
func.func @split(%x: tensor<3xcomplex<f64>>) -> tensor<3x2xcomplex<f32>> {
  %y = stablehlo.bitcast_convert %x : (tensor<3xcomplex<f64>>) -> tensor<3x2xcomplex<f32>>
  return %y : tensor<3x2xcomplex<f32>>
}

// -----

/// And back: the two words are joined, low first.
// CHECK-LABEL: func.func private @xla_complex_bitcast_0(
// CHECK: %[[LOW:.*]] = stablehlo.convert %{{.*}} : (tensor<3xui32>) -> tensor<3xui64>
// CHECK: %[[HIGH:.*]] = stablehlo.convert %{{.*}} : (tensor<3xui32>) -> tensor<3xui64>
// CHECK: %[[SHIFTED:.*]] = stablehlo.shift_left %[[HIGH]]
// CHECK: %[[BITS:.*]] = stablehlo.or %[[LOW]], %[[SHIFTED]]
// CHECK: stablehlo.bitcast_convert %[[BITS]] : (tensor<3xui64>) -> tensor<3xf64>
// CHECK-LABEL: func.func @join
func.func @join(%x: tensor<3x2xcomplex<f32>>) -> tensor<3xcomplex<f64>> {
  %y = stablehlo.bitcast_convert %x : (tensor<3x2xcomplex<f32>>) -> tensor<3xcomplex<f64>>
  return %y : tensor<3xcomplex<f64>>
}

// -----

/// A complex cbrt is the principal root: cbrt(|z|) at a third of atan2(im, re).
// CHECK-LABEL: func.func private @xla_complex_cbrt_0(
// CHECK: %[[ABS:.*]] = stablehlo.abs %{{.*}} : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
// CHECK: %[[RADIUS:.*]] = stablehlo.cbrt %[[ABS]] : tensor<2xf32>
// CHECK: %[[ANGLE:.*]] = stablehlo.atan2
// CHECK: %[[THIRD:.*]] = stablehlo.divide %[[ANGLE]]
// CHECK: stablehlo.cosine %[[THIRD]]
// CHECK: stablehlo.sine %[[THIRD]]
// CHECK: stablehlo.complex
// CHECK-LABEL: func.func @cbrt
// CHECK: call @xla_complex_cbrt_0
func.func @cbrt(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %y = stablehlo.cbrt %x : tensor<2xcomplex<f32>>
  return %y : tensor<2xcomplex<f32>>
}
