// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-fft{kernels=true})' | FileCheck %s

/// kernels=true: the 37-point Rader stage of a 444-point axis (37 x 12, 148
/// transforms: 65,712 points) is one call of its FFT micro-kernel per row q
/// of the (1, 37, 12, 2, 148) view, on the threads; x's buffer read, a fresh one
/// written, the twiddles one (12, 36, 2) table. The 12-point stage stays a generic.
// CHECK: func.func private @xlac_ukernel_fft_f32_f64_r37_f_w(i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func private @xla_fft_0(
// CHECK: bufferization.to_buffer %{{.*}} read_only : tensor<1x37x12x2x148xf32> to memref<1x37x12x2x148xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x37x12x2x148xf32>
// CHECK: arith.constant dense<"0x{{[0-9A-F]+}}"> : tensor<12x36x2xf64>
// CHECK: scf.forall (%{{.*}}) in (12) {
// CHECK: func.call @xlac_ukernel_fft_f32_f64_r37_f_w(
// CHECK: bufferization.to_tensor %{{.*}} restrict writable : memref<1x37x12x2x148xf32> to tensor<1x37x12x2x148xf32>
// CHECK: linalg.generic
// CHECK-NOT: xlac_ukernel_fft
// CHECK-LABEL: func.func @fft
func.func @fft(%x: tensor<148x444xcomplex<f32>>) -> tensor<148x444xcomplex<f32>> {
  %y = stablehlo.fft %x, type = FFT, length = [444] : (tensor<148x444xcomplex<f32>>) -> tensor<148x444xcomplex<f32>>
  return %y : tensor<148x444xcomplex<f32>>
}
