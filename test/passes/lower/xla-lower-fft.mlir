// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-fft)' --split-input-file --verify-diagnostics | FileCheck %s

/// A complex64 FFT runs in complex<f64>: widen each part, one DFT generic
/// that reduces over n with twiddle w[(n*k) mod N], then narrow each part.
// CHECK-LABEL: func.func private @xla_fft_0(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
// CHECK: %[[RE:.*]] = stablehlo.real %[[X]]
// CHECK: %[[RE64:.*]] = stablehlo.convert %[[RE]] : (tensor<3x4xf32>) -> tensor<3x4xf64>
// CHECK: %[[WIDE:.*]] = stablehlo.complex %[[RE64]], %{{.*}} : tensor<3x4xcomplex<f64>>
// CHECK: %[[COS:.*]] = arith.constant dense<[1.000000e+00, -0.000000e+00, -1.000000e+00, 0.000000e+00]> : tensor<4xf64>
// CHECK: %[[SIN:.*]] = arith.constant dense<[-0.000000e+00, -1.000000e+00, 0.000000e+00, 1.000000e+00]> : tensor<4xf64>
// CHECK: %[[LEN:.*]] = arith.constant 4 : index
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: %[[DFT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[WIDE]] : tensor<3x4xcomplex<f64>>) outs(%[[INIT]] : tensor<3x4xcomplex<f64>>)
// CHECK: %[[K:.*]] = linalg.index 1 : index
// CHECK: %[[N:.*]] = linalg.index 2 : index
// CHECK: %[[NK:.*]] = arith.muli %[[N]], %[[K]] : index
// CHECK: %[[M:.*]] = arith.remui %[[NK]], %[[LEN]] : index
// CHECK: tensor.extract %[[COS]][%[[M]]]
// CHECK: tensor.extract %[[SIN]][%[[M]]]
// CHECK: complex.mul
// CHECK: complex.add
// CHECK: stablehlo.real %[[DFT]]
// CHECK: stablehlo.convert %{{.*}} : (tensor<3x4xf64>) -> tensor<3x4xf32>
// CHECK-LABEL: func.func @fft
// CHECK: call @xla_fft_0
// CHECK-NOT: stablehlo.fft
func.func @fft(%x: tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>> {
  %y = stablehlo.fft %x, type = FFT, length = [4] : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  return %y : tensor<3x4xcomplex<f32>>
}

// -----

/// RFFT transforms the last axis real -> complex first (N/2+1 outputs),
/// then the other axes complex -> complex.
// CHECK-LABEL: func.func private @xla_fft_0(
// CHECK: %[[LAST:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x6xf64>) outs(%{{.*}} : tensor<2x4xcomplex<f64>>)
// CHECK: ^bb0(%{{.*}}: f64, %{{.*}}: complex<f64>):
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}} ins(%[[LAST]] : tensor<2x4xcomplex<f64>>) outs(%{{.*}} : tensor<2x4xcomplex<f64>>)
// CHECK: linalg.index 0 : index
// CHECK-LABEL: func.func @rfft
func.func @rfft(%x: tensor<2x6xf64>) -> tensor<2x4xcomplex<f64>> {
  %y = stablehlo.fft %x, type = RFFT, length = [2, 6] : (tensor<2x6xf64>) -> tensor<2x4xcomplex<f64>>
  return %y : tensor<2x4xcomplex<f64>>
}

// -----

/// IRFFT does the complex inverse first, then complex -> real on the last
/// axis, counting the omitted conjugate halves twice; one division by the
/// product of the lengths at the end.
// CHECK-LABEL: func.func private @xla_fft_0(
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xcomplex<f64>>)
// CHECK: %[[REAL:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xf64>)
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// CHECK: %[[WEIGHT:.*]] = arith.select %{{.*}}, %{{.*}}, %[[TWO]] : f64
// CHECK: arith.mulf %{{.*}}, %[[WEIGHT]] : f64
// CHECK: %[[COUNT:.*]] = stablehlo.constant dense<8.000000e+00> : tensor<2x4xf64>
// CHECK: stablehlo.divide %[[REAL]], %[[COUNT]]
// CHECK-LABEL: func.func @irfft
func.func @irfft(%x: tensor<2x3xcomplex<f64>>) -> tensor<2x4xf64> {
  %y = stablehlo.fft %x, type = IRFFT, length = [2, 4] : (tensor<2x3xcomplex<f64>>) -> tensor<2x4xf64>
  return %y : tensor<2x4xf64>
}

// -----

/// Dynamic shapes are reported, not lowered.
func.func @dynamic(%x: tensor<?xcomplex<f32>>) -> tensor<?xcomplex<f32>> {
  // expected-error @+1 {{stablehlo.fft with dynamic shapes is not supported}}
  %y = stablehlo.fft %x, type = FFT, length = [4] : (tensor<?xcomplex<f32>>) -> tensor<?xcomplex<f32>>
  return %y : tensor<?xcomplex<f32>>
}

// -----

/// 128 = 16 * 8 points, one transform: the four-step Cooley-Tukey path. Complex values as
/// f64 pairs on a trailing axis; the 16-point DFTs with the 8x16 twiddles
/// folded in (one 32x32 real matrix per n2: a matmul batched over n2, no
/// twiddle pass, no pair reverse), an 8-point DFT matmul, and the transposes
/// that put k = k1 + 16*k2 in order. No 128x128 matrix, no O(N^2) generic.
// CHECK-LABEL: func.func private @xla_fft_0(
// CHECK: %[[PAIRS:.*]] = stablehlo.concatenate {{.*}}, dim = 2 : {{.*}} -> tensor<1x128x2xf64>
// CHECK: stablehlo.reshape %[[PAIRS]] : (tensor<1x128x2xf64>) -> tensor<1x16x8x2xf64>
// CHECK: stablehlo.transpose {{.*}} dims = [2, 0, 1, 3] : (tensor<1x16x8x2xf64>) -> tensor<8x1x16x2xf64>
// CHECK: %[[M16:.*]] = stablehlo.constant dense<"0x{{.*}}"> : tensor<8x32x32xf64>
// CHECK: stablehlo.dot_general %{{.*}}, %[[M16]], batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x1x32xf64>, tensor<8x32x32xf64>) -> tensor<8x1x32xf64>
// CHECK-NOT: stablehlo.reverse
// CHECK: stablehlo.transpose {{.*}} dims = [1, 2, 0, 3] : (tensor<8x1x16x2xf64>) -> tensor<1x16x8x2xf64>
// CHECK: %[[M8:.*]] = stablehlo.constant dense<"0x{{.*}}"> : tensor<16x16xf64>
// CHECK: stablehlo.dot_general %{{.*}}, %[[M8]], contracting_dims = [1] x [0] : (tensor<16x16xf64>, tensor<16x16xf64>) -> tensor<16x16xf64>
// CHECK: stablehlo.transpose {{.*}} : (tensor<1x16x8x2xf64>) -> tensor<1x8x16x2xf64>
// CHECK: stablehlo.complex {{.*}} : tensor<1x128xcomplex<f64>>
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor<128x128xf64>
// CHECK-LABEL: func.func @fft_128
func.func @fft_128(%x: tensor<1x128xcomplex<f64>>) -> tensor<1x128xcomplex<f64>> {
  %y = stablehlo.fft %x, type = FFT, length = [128] : (tensor<1x128xcomplex<f64>>) -> tensor<1x128xcomplex<f64>>
  return %y : tensor<1x128xcomplex<f64>>
}

// -----

/// IRFFT of 64 points runs as a 32-point complex inverse (fft_real): one
/// elementwise pass pairs X[k] with X[32-k] (X[1:33] reversed, each term its
/// own reverse so that none is materialized) into Z'[k], the transform, and
/// the 32 pairs read as 64 reals (a reshape).
// CHECK-LABEL: func.func private @xla_fft_0(
// CHECK: %[[X:.*]] = stablehlo.concatenate {{.*}} -> tensor<1x33x2xf64>
// CHECK: %[[HEAD:.*]] = stablehlo.slice %[[X]] [0:1, 0:32, 0:2] : (tensor<1x33x2xf64>) -> tensor<1x32x2xf64>
// CHECK: stablehlo.reverse %[[HEAD]], dims = [2] : tensor<1x32x2xf64>
// CHECK: %[[TAIL:.*]] = stablehlo.slice %[[X]] [0:1, 1:33, 0:2]
// CHECK: stablehlo.reverse %[[TAIL]], dims = [1] : tensor<1x32x2xf64>
// CHECK: %[[TAIL2:.*]] = stablehlo.slice %[[X]] [0:1, 1:33, 0:2]
// CHECK: stablehlo.reverse %[[TAIL2]], dims = [1, 2] : tensor<1x32x2xf64>
// CHECK-COUNT-3: stablehlo.add {{.*}} : tensor<1x32x2xf64>
// CHECK: stablehlo.dot_general {{.*}} : (tensor<1x64xf64>, tensor<64x64xf64>) -> tensor<1x64xf64>
// CHECK: stablehlo.reshape {{.*}} : (tensor<1x32x2xf64>) -> tensor<1x64xf64>
// CHECK-NOT: tensor<1x64x2xf64>
// CHECK-LABEL: func.func @irfft_64
func.func @irfft_64(%x: tensor<1x33xcomplex<f64>>) -> tensor<1x64xf64> {
  %y = stablehlo.fft %x, type = IRFFT, length = [64] : (tensor<1x33xcomplex<f64>>) -> tensor<1x64xf64>
  return %y : tensor<1x64xf64>
}

// -----

/// An odd IRFFT (63) rebuilds the conjugate half: slice X[1:32], reverse,
/// negate the imaginary parts, append; then the complex transform.
// CHECK-LABEL: func.func private @xla_fft_0(
// CHECK: stablehlo.slice %{{.*}} [0:1, 1:32, 0:2] : (tensor<1x32x2xf64>) -> tensor<1x31x2xf64>
// CHECK: stablehlo.reverse %{{.*}}, dims = [1]
// CHECK: stablehlo.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf64>
// CHECK: stablehlo.concatenate {{.*}}, dim = 1 : (tensor<1x32x2xf64>, tensor<1x31x2xf64>) -> tensor<1x63x2xf64>
// CHECK: stablehlo.dot_general
// CHECK-LABEL: func.func @irfft_63
func.func @irfft_63(%x: tensor<1x32xcomplex<f64>>) -> tensor<1x63xf64> {
  %y = stablehlo.fft %x, type = IRFFT, length = [63] : (tensor<1x32xcomplex<f64>>) -> tensor<1x63xf64>
  return %y : tensor<1x63xf64>
}

// -----

/// A single-precision RFFT of 64 points: the 64 reals are 32 f32 pairs (a
/// reshape), the 32-point transform widens to f64 for its matmul and rounds
/// to f32 once; the even/odd split is one f64 pass rounded to f32 again.
// CHECK-LABEL: func.func private @xla_fft_0(
// CHECK: stablehlo.reshape %{{.*}} : (tensor<1x64xf32>) -> tensor<1x32x2xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<1x64xf32>) -> tensor<1x64xf64>
// CHECK: stablehlo.dot_general {{.*}} : (tensor<1x64xf64>, tensor<64x64xf64>) -> tensor<1x64xf64>
// CHECK: stablehlo.convert %{{.*}} : (tensor<1x32x2xf64>) -> tensor<1x32x2xf32>
// CHECK: stablehlo.concatenate {{.*}} -> tensor<1x33x2xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<1x33x2xf32>) -> tensor<1x33x2xf64>
// CHECK: stablehlo.convert %{{.*}} : (tensor<1x33x2xf64>) -> tensor<1x33x2xf32>
// CHECK: stablehlo.complex {{.*}} : tensor<1x33xcomplex<f32>>
// CHECK-LABEL: func.func @rfft_64_f32
func.func @rfft_64_f32(%x: tensor<1x64xf32>) -> tensor<1x33xcomplex<f32>> {
  %y = stablehlo.fft %x, type = RFFT, length = [64] : (tensor<1x64xf32>) -> tensor<1x33xcomplex<f32>>
  return %y : tensor<1x33xcomplex<f32>>
}
