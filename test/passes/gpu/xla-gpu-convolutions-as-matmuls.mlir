// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-convolutions-as-matmuls)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-convolutions-as-matmuls{narrow=true})' --split-input-file | FileCheck %s --check-prefix=NARROW
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-convolutions-as-matmuls{max-scratch-mib=0 remarks=true})' --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=CAPPED

/// A 3x3 stride-2 convolution: an im2col (output pixel, tap, channel; the input read
/// at o * 2 + k) into scratch, the filter reshaped, one matmul into the result's
/// buffer collapsed and filled again; the old fill is gone.
// CHECK-DAG: #[[$PATCH:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d3, d2 * 2 + d4, d5)>
// CHECK-LABEL: func.func @strided
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4x4x8xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$PATCH]], {{.*}}]{{.*}} ins(%arg0 : tensor<2x9x9x3xf32>) outs({{.*}} : tensor<2x4x4x3x3x3xf32>)
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<2x4x4x3x3x3xf32> into tensor<32x27xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1, 2], [3]] : tensor<3x3x3x8xf32> into tensor<27x8xf32>
// CHECK: %[[C0:.*]] = tensor.collapse_shape %[[E]] {{\[\[}}0, 1, 2], [3]] : tensor<2x4x4x8xf32> into tensor<32x8xf32>
// CHECK: %[[C:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[C0]] : tensor<32x8xf32>)
// CHECK: %[[M:.*]] = linalg.matmul {xla.conv = "conv3x3/s2 im2col"} ins(%[[A]], %[[B]] : tensor<32x27xf32>, tensor<27x8xf32>) outs(%[[C]] : tensor<32x8xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1, 2], [3]] output_shape [2, 4, 4, 8]
// CHECK: return %[[R]]
// CAPPED-LABEL: func.func @strided
// CAPPED: linalg.conv_2d_nhwc_hwcf
func.func @strided(%x: tensor<2x9x9x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<2x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  // expected-remark @below {{convolution kept as a thread-per-output kernel: its im2col scratch (3456 bytes) is over max-scratch-mib=0}}
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x9x9x3xf32>, tensor<3x3x3x8xf32>) outs(%f : tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  return %y : tensor<2x4x4x8xf32>
}

// -----

/// 1x1 at unit stride: the input is the patch matrix (a view, no im2col), and a
/// convolution accumulating into a value (no fill) writes it collapsed.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: linalg.generic
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2], [3]] : tensor<2x5x7x16xf32> into tensor<70x16xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1, 2], [3]] : tensor<2x5x7x24xf32> into tensor<70x24xf32>
// CHECK: linalg.matmul {xla.conv = "conv1x1 view"} ins(%[[A]], %{{.*}} : tensor<70x16xf32>, tensor<16x24xf32>) outs(%[[C]] : tensor<70x24xf32>)
// CAPPED-LABEL: func.func @pointwise
// CAPPED: linalg.matmul {xla.conv = "conv1x1 view"}
func.func @pointwise(%x: tensor<2x5x7x16xf32>, %w: tensor<1x1x16x24xf32>, %acc: tensor<2x5x7x24xf32>) -> tensor<2x5x7x24xf32> {
  // expected-remark @below {{convolution as a 70x24x16 matmul (conv1x1 view, 0 bytes of scratch)}}
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x5x7x16xf32>, tensor<1x1x16x24xf32>) outs(%acc : tensor<2x5x7x24xf32>) -> tensor<2x5x7x24xf32>
  return %y : tensor<2x5x7x24xf32>
}

// -----

/// A window as large as the input, one output pixel: each image is its patch row (a view).
// CHECK-LABEL: func.func @whole_window
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2, 3]] : tensor<3x4x4x6xf32> into tensor<3x96xf32>
// CHECK: linalg.matmul {xla.conv = "conv4x4 view"}
func.func @whole_window(%x: tensor<3x4x4x6xf32>, %w: tensor<4x4x6x10xf32>, %acc: tensor<3x1x1x10xf32>) -> tensor<3x1x1x10xf32> {
  // expected-remark @below {{convolution as a 3x10x96 matmul (conv4x4 view, 0 bytes of scratch)}}
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<3x4x4x6xf32>, tensor<4x4x6x10xf32>) outs(%acc : tensor<3x1x1x10xf32>) -> tensor<3x1x1x10xf32>
  return %y : tensor<3x1x1x10xf32>
}

// -----

/// A bf16 convolution widened to f32 (xla-widen-contractions): with narrow=true the
/// patches are stored bf16 again and the matmul reads the bf16 filter where it lies
/// (its widening is gone; the input's stays, the im2col reads it); without, all in f32. 1-D, dilated.
// CHECK-LABEL: func.func @narrow
// CHECK: linalg.matmul {xla.conv = "conv3/d2 im2col"} ins({{.*}} : tensor<22x12xf32>, tensor<12x8xf32>)
// NARROW-LABEL: func.func @narrow
// NARROW: arith.extf %{{.*}} : bf16 to f32
// NARROW-NOT: arith.extf
// NARROW: arith.truncf %{{.*}} : f32 to bf16
// NARROW: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2]] : tensor<3x4x8xbf16> into tensor<12x8xbf16>
// NARROW: linalg.matmul {xla.conv = "conv3/d2 im2col"} ins(%{{.*}}, %[[B]] : tensor<22x12xbf16>, tensor<12x8xbf16>) outs(%{{.*}} : tensor<22x8xf32>)
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @narrow(%x: tensor<2x15x4xbf16>, %w: tensor<3x4x8xbf16>) -> tensor<2x11x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<2x15x4xf32>
  %xf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x15x4xbf16>) outs(%ex : tensor<2x15x4xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<2x15x4xf32>
  %ew = tensor.empty() : tensor<3x4x8xf32>
  %wf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<3x4x8xbf16>) outs(%ew : tensor<3x4x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<3x4x8xf32>
  %e = tensor.empty() : tensor<2x11x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x11x8xf32>) -> tensor<2x11x8xf32>
  // expected-remark @below {{convolution kept as a thread-per-output kernel: its im2col scratch (1056 bytes) is over max-scratch-mib=0}}
  %y = linalg.conv_1d_nwc_wcf {dilations = dense<2> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%xf, %wf : tensor<2x15x4xf32>, tensor<3x4x8xf32>) outs(%f : tensor<2x11x8xf32>) -> tensor<2x11x8xf32>
  return %y : tensor<2x11x8xf32>
}

// -----

/// A "SAME" 3x3 convolution: the zero padding is folded into the im2col, which reads
/// the unpadded input at (o + k - 1 + 6) mod 6 (always in bounds) and takes the pad
/// value where the mask, indexed by (o + k - 1 + 6) floordiv 6, says the tap is
/// outside (0 before, 1 inside, 2 after): no tensor.pad left, no linalg.index.
// CHECK-DAG: #[[$READ:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d1 + d3 + 5) mod 6, (d2 + d4 + 5) mod 6, d5)>
// CHECK-DAG: #[[$SIDE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> ((d1 + d3 + 5) floordiv 6, (d2 + d4 + 5) floordiv 6)>
// CHECK-LABEL: func.func @same
// CHECK-NOT: tensor.pad
// CHECK: %[[MASK:.*]] = arith.constant dense<{{\[\[}}0, 0, 0], [0, 1, 0], [0, 0, 0]]> : tensor<3x3xi8>
// CHECK: linalg.generic {indexing_maps = [#[[$READ]], #[[$SIDE]], {{.*}}]{{.*}} ins(%arg0, %[[MASK]] : tensor<2x6x6x4xf32>, tensor<3x3xi8>) outs({{.*}} : tensor<2x6x6x3x3x4xf32>)
// CHECK: ^bb0(%[[READ_V:.*]]: f32, %[[INSIDE:.*]]: i8, %{{.*}}: f32):
// CHECK: %[[KEEP:.*]] = arith.cmpi ne, %[[INSIDE]]
// CHECK: arith.select %[[KEEP]], %[[READ_V]], %{{.*}} : f32
// CHECK-NOT: linalg.index
// CHECK: linalg.matmul {xla.conv = "conv3x3 im2col"} ins({{.*}} : tensor<72x36xf32>, tensor<36x8xf32>)
// NARROW-LABEL: func.func @same
// NARROW-NOT: tensor.pad
// NARROW: arith.select
// CAPPED-LABEL: func.func @same
// CAPPED: tensor.pad
// CAPPED: linalg.conv_2d_nhwc_hwcf
func.func @same(%x: tensor<2x6x6x4xf32>, %w: tensor<3x3x4x8xf32>) -> tensor<2x6x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x6x6x4xf32> to tensor<2x8x8x4xf32>
  %e = tensor.empty() : tensor<2x6x6x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
  // expected-remark @below {{convolution kept as a thread-per-output kernel: its im2col scratch (10368 bytes) is over max-scratch-mib=0}}
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<2x8x8x4xf32>, tensor<3x3x4x8xf32>) outs(%f : tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
  return %y : tensor<2x6x6x8xf32>
}

// -----

/// A padding the mask cannot cover (more than the input's extent on a side) stays a
/// tensor.pad before a plain im2col.
// CHECK-LABEL: func.func @wide_padding
// CHECK: tensor.pad
// CHECK: linalg.matmul {xla.conv = "conv3 im2col"}
func.func @wide_padding(%x: tensor<1x2x4xf32>, %w: tensor<3x4x8xf32>) -> tensor<1x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 3, 0] high[0, 3, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<1x2x4xf32> to tensor<1x8x4xf32>
  %e = tensor.empty() : tensor<1x6x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x8xf32>) -> tensor<1x6x8xf32>
  // expected-remark @below {{convolution kept as a thread-per-output kernel: its im2col scratch (288 bytes) is over max-scratch-mib=0}}
  %y = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%p, %w : tensor<1x8x4xf32>, tensor<3x4x8xf32>) outs(%f : tensor<1x6x8xf32>) -> tensor<1x6x8xf32>
  return %y : tensor<1x6x8xf32>
}
