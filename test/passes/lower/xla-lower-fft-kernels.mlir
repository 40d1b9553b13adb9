// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-fft{kernels=true})' | FileCheck %s

/// kernels=true: the stages of a 444-point axis (37 x 12, 148 transforms:
/// 65,712 points, a Rader prime) are calls of FFT micro-kernels, one per row:
/// the 37-point stage per q of the (1, 37, 12, 2, 148) view, on the threads;
/// x's planes (888 x 148, the 5-D view's layout) read, a fresh buffer written, the twiddles one (12, 36, 2) table;
/// the last (12 points, no twiddles, f32) per row of the 37 done.
// CHECK: func.func private @xlac_ukernel_fft_f32_f32_r12_f(i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK: func.func private @xlac_ukernel_fft_f32_f64_r37_f_w(i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func private @xla_fft_0(
// CHECK: bufferization.to_buffer %{{.*}} read_only : tensor<888x148xf32> to memref<888x148xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x37x12x2x148xf32>
// CHECK: arith.constant dense<"0x{{[0-9A-F]+}}"> : tensor<12x36x2xf64>
// CHECK: scf.forall (%{{.*}}) in (12) {
// CHECK: func.call @xlac_ukernel_fft_f32_f64_r37_f_w(
// CHECK: bufferization.to_tensor %{{.*}} restrict writable : memref<1x37x12x2x148xf32> to tensor<1x37x12x2x148xf32>
// CHECK: scf.forall (%{{.*}}) in (37) {
// CHECK: func.call @xlac_ukernel_fft_f32_f32_r12_f(
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @fft
func.func @fft(%x: tensor<148x444xcomplex<f32>>) -> tensor<148x444xcomplex<f32>> {
  %y = stablehlo.fft %x, type = FFT, length = [444] : (tensor<148x444xcomplex<f32>>) -> tensor<148x444xcomplex<f32>>
  return %y : tensor<148x444xcomplex<f32>>
}
