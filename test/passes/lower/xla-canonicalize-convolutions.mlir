// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-canonicalize-convolutions,inline)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-canonicalize-convolutions{rows=false},inline)' --split-input-file | FileCheck %s --check-prefix=TAPS

/// NCHW x OIHW -> NCHW (PyTorch's layout): transposes around a canonical convolution.
// CHECK-LABEL: func.func @nchw
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x16x16xf32>, %[[W:.*]]: tensor<4x8x3x3xf32>)
// CHECK: %[[XT:.*]] = stablehlo.transpose %[[X]], dims = [0, 2, 3, 1] : (tensor<1x8x16x16xf32>) -> tensor<1x16x16x8xf32>
// CHECK: %[[WT:.*]] = stablehlo.transpose %[[W]], dims = [2, 3, 1, 0] : (tensor<4x8x3x3xf32>) -> tensor<3x3x8x4xf32>
// CHECK: %[[C:.*]] = stablehlo.convolution(%[[XT]], %[[WT]]) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: (tensor<1x16x16x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x14x14x4xf32>
// CHECK: %[[Y:.*]] = stablehlo.transpose %[[C]], dims = [0, 3, 1, 2] : (tensor<1x14x14x4xf32>) -> tensor<1x4x14x14xf32>
// CHECK: return %[[Y]]
func.func @nchw(%x: tensor<1x8x16x16xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x14x14xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x14x14xf32>
  return %0 : tensor<1x4x14x14xf32>
}

// -----

/// The input gradient of a stride-2 convolution (input dilated by 2): one
/// unit-stride convolution per phase of the stride, interleaved, no multiplications by zeros.
// CHECK-LABEL: func.func @input_gradient
// CHECK-COUNT-4: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]
// CHECK-NOT: lhs_dilate
// CHECK: stablehlo.reshape {{.*}} -> tensor<1x8x8x4xf32>
func.func @input_gradient(%g: tensor<1x4x4x4xf32>, %w: tensor<3x3x4x4xf32>) -> tensor<1x8x8x4xf32> {
  %0 = stablehlo.convolution(%g, %w) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f],
       window = {pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x4x4x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}

// -----

/// A weight gradient (3x3 output positions, a 14x14 "kernel"): the windows of the
/// padded input (strided slices) under one row of positions side by side along the
/// channels, one dot_general per row contracting them with dY as it lies. With 4
/// channels and 16 features the features are the matmul's columns; each [12, 16]
/// result is the row's three [4, 16] gradients, written into place
/// (dynamic_update_slice, a row copy) and reshaped to the [3, 3, 4, 16] gradient.
// CHECK-LABEL: func.func @weight_gradient
// CHECK-DAG: %[[SIX:.*]] = stablehlo.constant dense<6> : tensor<i64>
// CHECK-DAG: %[[THREE:.*]] = stablehlo.constant dense<3> : tensor<i64>
// CHECK-DAG: %[[Z:.*]] = stablehlo.constant dense<0> : tensor<i64>
// CHECK-NOT: stablehlo.transpose
// CHECK: %[[PAD:.*]] = stablehlo.pad %{{.*}}, low = [0, 1, 1, 0], high = [0, 1, 1, 0]
// CHECK: %[[A:.*]] = stablehlo.slice %[[PAD]] [0:8, 0:14, 0:14, 0:4]
// CHECK: %[[B:.*]] = stablehlo.slice %[[PAD]] [0:8, 0:14, 1:15, 0:4]
// CHECK: %[[C:.*]] = stablehlo.slice %[[PAD]] [0:8, 0:14, 2:16, 0:4]
// CHECK: %[[ROW:.*]] = stablehlo.concatenate %[[A]], %[[B]], %[[C]], dim = 3 : {{.*}} -> tensor<8x14x14x12xf32>
// CHECK: stablehlo.dot_general %[[ROW]], %{{.*}}, contracting_dims = [0, 1, 2] x [0, 1, 2] : (tensor<8x14x14x12xf32>, tensor<8x14x14x16xf32>) -> tensor<12x16xf32>
// CHECK-COUNT-2: stablehlo.dot_general {{.*}} -> tensor<12x16xf32>
// CHECK-NOT: stablehlo.dot_general
// CHECK: stablehlo.dynamic_update_slice %{{.*}}, %{{.*}}, %[[Z]], %[[Z]], %[[Z]] : (tensor<9x4x16xf32>, tensor<3x4x16xf32>, {{.*}}) -> tensor<9x4x16xf32>
// CHECK: stablehlo.dynamic_update_slice %{{.*}}, %{{.*}}, %[[THREE]], %[[Z]], %[[Z]]
// CHECK: stablehlo.dynamic_update_slice %{{.*}}, %{{.*}}, %[[SIX]], %[[Z]], %[[Z]]
// CHECK: stablehlo.reshape %{{.*}} : (tensor<9x4x16xf32>) -> tensor<3x3x4x16xf32>
// CHECK-NOT: stablehlo.transpose
// CHECK-NOT: stablehlo.convolution
/// rows=false (the CUDA pipeline: its one-matmul rewrite takes the per-position
/// dots): one dot_general per position, its window transposed into A
// TAPS-LABEL: func.func @weight_gradient
// TAPS-NOT: stablehlo.concatenate
// TAPS-COUNT-9: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [0, 1, 2] x [0, 1, 2] : (tensor<8x14x14x4xf32>, tensor<8x14x14x16xf32>) -> tensor<4x16xf32>
// TAPS-COUNT-9: stablehlo.dynamic_update_slice {{.*}} -> tensor<9x4x16xf32>
// TAPS: return
func.func @weight_gradient(%x: tensor<8x14x14x4xf32>, %g: tensor<8x14x14x16xf32>) -> tensor<3x3x4x16xf32> {
  %0 = stablehlo.convolution(%x, %g) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f],
       window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<8x14x14x4xf32>, tensor<8x14x14x16xf32>) -> tensor<3x3x4x16xf32>
  return %0 : tensor<3x3x4x16xf32>
}

// -----

/// With 64 channels the window is the matmul's B (its channels contiguous) under dY
/// transposed once to [o, n, h, w]; the [16, 64] results are transposed at the end.
// CHECK-LABEL: func.func @weight_gradient_wide
// CHECK: %[[DYT:.*]] = stablehlo.transpose %{{.*}}, dims = [3, 0, 1, 2] : (tensor<2x6x6x16xf32>) -> tensor<16x2x6x6xf32>
// CHECK-NOT: stablehlo.transpose
// CHECK-COUNT-9: stablehlo.dot_general %[[DYT]], %{{.*}}, contracting_dims = [1, 2, 3] x [0, 1, 2] : {{.*}} -> tensor<16x64xf32>
// CHECK-COUNT-9: stablehlo.dynamic_update_slice {{.*}} -> tensor<9x16x64xf32>
// CHECK: %[[GRID:.*]] = stablehlo.reshape %{{.*}} : (tensor<9x16x64xf32>) -> tensor<3x3x16x64xf32>
// CHECK: stablehlo.transpose %[[GRID]], dims = [0, 1, 3, 2] : (tensor<3x3x16x64xf32>) -> tensor<3x3x64x16xf32>
func.func @weight_gradient_wide(%x: tensor<2x6x6x64xf32>, %g: tensor<2x6x6x16xf32>) -> tensor<3x3x64x16xf32> {
  %0 = stablehlo.convolution(%x, %g) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f],
       window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<2x6x6x64xf32>, tensor<2x6x6x16xf32>) -> tensor<3x3x64x16xf32>
  return %0 : tensor<3x3x64x16xf32>
}

// -----

/// Canonical and grouped convolutions are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: stablehlo.transpose
// CHECK-COUNT-2: stablehlo.convolution
func.func @left_alone(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x4xf32>, %d: tensor<3x3x1x4xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x6x6x4xf32>
  %1 = stablehlo.convolution(%x, %d) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {}
       {batch_group_count = 1 : i64, feature_group_count = 4 : i64}
       : (tensor<1x8x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<1x6x6x4xf32>
  return %0, %1 : tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>
}

// -----

/// PyTorch's depthwise 3x3 (a group per channel): the padded input's nine
/// shifted windows, each times its tap's per-channel weight, summed; no
/// transposes, no convolution left.
// CHECK-LABEL: func.func @depthwise_nchw
// CHECK: %[[P:.*]] = stablehlo.pad %{{.*}}, low = [0, 0, 1, 1], high = [0, 0, 1, 1]
// CHECK: stablehlo.slice %[[P]] [0:2, 0:8, 0:6, 0:6]
// CHECK: stablehlo.broadcast_in_dim {{.*}}, dims = [1, 0, 2, 3] : (tensor<8x1x1x1xf32>) -> tensor<2x8x6x6xf32>
// CHECK-COUNT-8: stablehlo.add
// CHECK-NOT: stablehlo.convolution
// CHECK-NOT: stablehlo.transpose
func.func @depthwise_nchw(%x: tensor<2x8x6x6xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<2x8x6x6xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1],
       window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 8 : i64}
       : (tensor<2x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x6x6xf32>
  return %0 : tensor<2x8x6x6xf32>
}

// -----

/// Strided, the windows' rows would be read lane by lane: left to upstream.
// CHECK-LABEL: func.func @depthwise_nchw_strided
// CHECK: stablehlo.convolution
// CHECK-SAME: feature_group_count = 8
func.func @depthwise_nchw_strided(%x: tensor<2x8x6x6xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<2x8x3x3xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1],
       window = {stride = [2, 2], pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 8 : i64}
       : (tensor<2x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x3x3xf32>
  return %0 : tensor<2x8x3x3xf32>
}

// -----

/// Negative padding crops (JAX's weight gradient of a stride-2 1x1 convolution):
/// the input is sliced, then the per-position dots read the cropped windows.
// CHECK-LABEL: func.func @weight_gradient_cropped
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x4x8xf32>
// CHECK: %[[C:.*]] = stablehlo.slice %[[X]] [0:2, 0:3, 0:3, 0:8] : (tensor<2x4x4x8xf32>) -> tensor<2x3x3x8xf32>
// CHECK: stablehlo.slice %[[C]] [0:2, 0:3:2, 0:3:2, 0:8]
// CHECK: stablehlo.dot_general
// CHECK-NOT: stablehlo.convolution
func.func @weight_gradient_cropped(%x: tensor<2x4x4x8xf32>, %g: tensor<2x2x2x8xf32>) -> tensor<1x1x8x8xf32> {
  %0 = stablehlo.convolution(%x, %g) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f],
       window = {pad = [[0, -1], [0, -1]], rhs_dilate = [2, 2]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<2x4x4x8xf32>, tensor<2x2x2x8xf32>) -> tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x8x8xf32>
}

// -----

/// A canonical convolution with a negative edge: padded where positive, sliced
/// where negative, and the convolution left with no padding (upstream's lowering
/// would pad by the negative amount).
// CHECK-LABEL: func.func @cropped
// CHECK-SAME: (%[[X:.*]]: tensor<2x9x9x8xf32>, %[[W:.*]]: tensor<3x3x8x16xf32>)
// CHECK: %[[P:.*]] = stablehlo.pad %[[X]], %{{.*}}, low = [0, 0, 2, 0], high = [0, 1, 0, 0], interior = [0, 0, 0, 0]
// CHECK: %[[S:.*]] = stablehlo.slice %[[P]] [0:2, 1:10, 0:9, 0:8] : (tensor<2x10x11x8xf32>) -> tensor<2x9x9x8xf32>
// CHECK: stablehlo.convolution(%[[S]], %[[W]]) {{.*}} window = {stride = [2, 2], pad = {{\[\[}}0, 0], [0, 0]]
func.func @cropped(%x: tensor<2x9x9x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<2x4x4x16xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [2, 2], pad = [[-1, 1], [2, -2]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<2x9x9x8xf32>, tensor<3x3x8x16xf32>) -> tensor<2x4x4x16xf32>
  return %0 : tensor<2x4x4x16xf32>
}

// -----

/// A 1-D convolution (jax's default NCW x OIW -> NCW layout) becomes a 2-D one
/// with a unit spatial dim 0 in front of its own (window 1, no padding there):
/// reshapes around the canonical NHWC convolution, which has a schedule.
// CHECK-LABEL: func.func @ncw_1d
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x40xf32>, %[[W:.*]]: tensor<16x8x5xf32>)
// CHECK: %[[X4:.*]] = stablehlo.reshape %[[X]] : (tensor<2x8x40xf32>) -> tensor<2x8x1x40xf32>
// CHECK: %[[W4:.*]] = stablehlo.reshape %[[W]] : (tensor<16x8x5xf32>) -> tensor<16x8x1x5xf32>
// CHECK: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: stride = [1, 1], pad = {{\[}}[0, 0], [2, 2]]
// CHECK-SAME: (tensor<2x1x40x8xf32>, tensor<1x5x8x16xf32>) -> tensor<2x1x40x16xf32>
// CHECK: %[[Y:.*]] = stablehlo.reshape %{{.*}} : (tensor<2x16x1x40xf32>) -> tensor<2x16x40xf32>
// CHECK: return %[[Y]]
func.func @ncw_1d(%x: tensor<2x8x40xf32>, %w: tensor<16x8x5xf32>) -> tensor<2x16x40xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[2, 2]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<2x8x40xf32>, tensor<16x8x5xf32>) -> tensor<2x16x40xf32>
  return %0 : tensor<2x16x40xf32>
}

// -----

/// One input channel and a 3x9 kernel (canonical layouts): the kernel's 9
/// columns folded into the channels, a 3x1 convolution over 9 channels.
// CHECK-LABEL: func.func @wide_kernel_one_channel
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x20x1xf32>, %[[W:.*]]: tensor<3x9x1x4xf32>)
// CHECK: stablehlo.pad %[[X]], {{.*}} low = [0, 1, 4, 0], high = [0, 1, 4, 0]
// CHECK-COUNT-9: stablehlo.slice {{.*}} -> tensor<2x18x20x1xf32>
// CHECK: stablehlo.transpose {{.*}}, dims = [1, 2, 3, 0, 4] : (tensor<9x2x18x20x1xf32>) -> tensor<2x18x20x9x1xf32>
// CHECK: %[[W2:.*]] = stablehlo.reshape %[[W]] : (tensor<3x9x1x4xf32>) -> tensor<3x1x9x4xf32>
// CHECK: %[[Y:.*]] = stablehlo.convolution({{.*}}, %[[W2]]) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = {{\[}}[0, 0], [0, 0]]
// CHECK-SAME: (tensor<2x18x20x9xf32>, tensor<3x1x9x4xf32>) -> tensor<2x16x20x4xf32>
// CHECK: return %[[Y]]
func.func @wide_kernel_one_channel(%x: tensor<2x16x20x1xf32>, %w: tensor<3x9x1x4xf32>) -> tensor<2x16x20x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {pad = [[1, 1], [4, 4]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<2x16x20x1xf32>, tensor<3x9x1x4xf32>) -> tensor<2x16x20x4xf32>
  return %0 : tensor<2x16x20x4xf32>
}

// -----

/// 4 groups of 4 input channels: one ungrouped convolution per group on its
/// slice of the input's channels and the kernel's output features, the results
/// concatenated (no product of one group's inputs and another's weights).
// CHECK-LABEL: func.func @grouped
// CHECK-SAME: (%[[X:.*]]: tensor<2x9x9x16xf32>, %[[W:.*]]: tensor<3x3x4x24xf32>)
// CHECK: %[[X0:.*]] = stablehlo.slice %[[X]] [0:2, 0:9, 0:9, 0:4]
// CHECK: %[[W0:.*]] = stablehlo.slice %[[W]] [0:3, 0:3, 0:4, 0:6]
// CHECK: %[[Y0:.*]] = stablehlo.convolution(%[[X0]], %[[W0]])
// CHECK-SAME: feature_group_count = 1 : i64
// CHECK-SAME: -> tensor<2x9x9x6xf32>
// CHECK: %[[X3:.*]] = stablehlo.slice %[[X]] [0:2, 0:9, 0:9, 12:16]
// CHECK: %[[W3:.*]] = stablehlo.slice %[[W]] [0:3, 0:3, 0:4, 18:24]
// CHECK: %[[Y3:.*]] = stablehlo.convolution(%[[X3]], %[[W3]])
// CHECK: %[[Y:.*]] = stablehlo.concatenate %[[Y0]], %{{.*}}, %{{.*}}, %[[Y3]], dim = 3
// CHECK-NOT: stablehlo.select
// CHECK: return %[[Y]]
func.func @grouped(%x: tensor<2x9x9x16xf32>, %w: tensor<3x3x4x24xf32>) -> tensor<2x9x9x24xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 4 : i64}
       : (tensor<2x9x9x16xf32>, tensor<3x3x4x24xf32>) -> tensor<2x9x9x24xf32>
  return %0 : tensor<2x9x9x24xf32>
}

// -----

/// A depthwise convolution with 2 outputs per channel: two of multiplier 1
/// (the kernel's output features 0, 2, ... and 1, 3, ...), interleaved.
// CHECK-LABEL: func.func @depthwise_multiplier
// CHECK-SAME: (%[[X:.*]]: tensor<2x10x10x8xf32>, %[[W:.*]]: tensor<3x3x1x16xf32>)
// CHECK: %[[W0:.*]] = stablehlo.slice %[[W]] [0:3, 0:3, 0:1, 0:16:2]
// CHECK: %[[Y0:.*]] = stablehlo.convolution(%[[X]], %[[W0]])
// CHECK-SAME: feature_group_count = 8 : i64
// CHECK: %[[W1:.*]] = stablehlo.slice %[[W]] [0:3, 0:3, 0:1, 1:16:2]
// CHECK: %[[Y1:.*]] = stablehlo.convolution(%[[X]], %[[W1]])
// CHECK: %[[C:.*]] = stablehlo.concatenate {{.*}}, dim = 4 : {{.*}} -> tensor<2x8x8x8x2xf32>
// CHECK: %[[Y:.*]] = stablehlo.reshape %[[C]] : (tensor<2x8x8x8x2xf32>) -> tensor<2x8x8x16xf32>
// CHECK: return %[[Y]]
func.func @depthwise_multiplier(%x: tensor<2x10x10x8xf32>, %w: tensor<3x3x1x16xf32>) -> tensor<2x8x8x16xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {}
       {batch_group_count = 1 : i64, feature_group_count = 8 : i64}
       : (tensor<2x10x10x8xf32>, tensor<3x3x1x16xf32>) -> tensor<2x8x8x16xf32>
  return %0 : tensor<2x8x8x16xf32>
}

// -----

/// A plain depthwise convolution in the canonical layout stays: upstream's
/// depthwise form has a schedule.
// CHECK-LABEL: func.func @depthwise_plain
// CHECK-NEXT: %[[Y:.*]] = stablehlo.convolution(%arg0, %arg1)
// CHECK-SAME: feature_group_count = 8 : i64
// CHECK-NEXT: return %[[Y]]
func.func @depthwise_plain(%x: tensor<2x10x10x8xf32>, %w: tensor<3x3x1x8xf32>) -> tensor<2x8x8x8xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {}
       {batch_group_count = 1 : i64, feature_group_count = 8 : i64}
       : (tensor<2x10x10x8xf32>, tensor<3x3x1x8xf32>) -> tensor<2x8x8x8xf32>
  return %0 : tensor<2x8x8x8xf32>
}

// -----

/// A weight gradient with 4 batch groups: one ungrouped convolution per group
/// on its slice of the input's batch (its channels here) and of the kernel's
/// output features, in the next round the per-position dots of a weight gradient.
// CHECK-LABEL: func.func @batch_groups
// CHECK: %[[T:.*]] = stablehlo.transpose %arg0, dims = [3, 1, 2, 0] : (tensor<2x8x8x16xf32>) -> tensor<16x8x8x2xf32>
// CHECK: %[[D:.*]] = stablehlo.transpose %arg1, dims = [1, 2, 0, 3] : (tensor<2x8x8x16xf32>) -> tensor<8x8x2x16xf32>
// CHECK: stablehlo.slice %[[T]] [0:4, 0:8, 0:8, 0:2] : (tensor<16x8x8x2xf32>) -> tensor<4x8x8x2xf32>
// CHECK: stablehlo.slice %[[D]] [0:8, 0:8, 0:2, 0:4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x2x4xf32>
// CHECK-COUNT-9: stablehlo.dot_general {{.*}} -> tensor<4x4xf32>
// CHECK: stablehlo.slice %[[T]] [12:16, 0:8, 0:8, 0:2]
// CHECK: stablehlo.slice %[[D]] [0:8, 0:8, 0:2, 12:16]
// CHECK-COUNT-9: stablehlo.dot_general
// CHECK: stablehlo.concatenate {{.*}} dim = 3 : {{.*}} -> tensor<4x3x3x16xf32>
// CHECK-NOT: stablehlo.convolution
func.func @batch_groups(%x: tensor<2x8x8x16xf32>, %dy: tensor<2x8x8x16xf32>) -> tensor<3x3x4x16xf32> {
  %0 = stablehlo.convolution(%x, %dy) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f],
       window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 4 : i64, feature_group_count = 1 : i64}
       : (tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>) -> tensor<3x3x4x16xf32>
  return %0 : tensor<3x3x4x16xf32>
}

// -----

/// A depthwise weight gradient (per batch group 1 image x 1 output feature)
/// keeps upstream's loop: faster than 8 weight gradients of tiny dots.
// CHECK-LABEL: func.func @batch_groups_depthwise
// CHECK-NEXT: %[[Y:.*]] = stablehlo.convolution(%arg0, %arg1)
// CHECK-SAME: batch_group_count = 8 : i64
// CHECK-NEXT: return %[[Y]]
func.func @batch_groups_depthwise(%x: tensor<2x8x8x8xf32>, %dy: tensor<2x8x8x8xf32>) -> tensor<3x3x1x8xf32> {
  %0 = stablehlo.convolution(%x, %dy) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f],
       window = {pad = [[1, 1], [1, 1]]}
       {batch_group_count = 8 : i64, feature_group_count = 1 : i64}
       : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<3x3x1x8xf32>
  return %0 : tensor<3x3x1x8xf32>
}

// -----

/// jnp.convolve's 1,280 taps over one channel (NCW, one filter): the taps in 16
/// segments of 80, the output row in 4 rows, each row's windows of the segments
/// (32 slices of the padded input: 2 blocks of 840 of the 1,679 columns a lane
/// reads, not one per tap) the 16 channels of one depthwise convolution whose
/// kernel is segment s's taps in channel s; the partial sums added in pairs.
// CHECK-LABEL: func.func @long_1d
// CHECK: stablehlo.pad %{{.*}}, low = [0, 0, 1279, 0], high = [0, 0, 2041, 0]
// CHECK-COUNT-32: stablehlo.slice %{{.*}} -> tensor<1x1x6400x1xf32>
// CHECK: stablehlo.transpose %{{.*}}, dims = [2, 1, 3, 0] : (tensor<16x2x4x840xf32>) -> tensor<4x2x840x16xf32>
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0] : (tensor<16x80xf32>) -> tensor<80x16xf32>
// CHECK: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: feature_group_count = 16
// CHECK-SAME: (tensor<1x4x1679x16xf32>, tensor<1x80x1x16xf32>) -> tensor<1x4x1600x16xf32>
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0] : (tensor<6400x16xf32>) -> tensor<16x6400xf32>
// CHECK-COUNT-15: stablehlo.add
// CHECK: stablehlo.slice %{{.*}} [0:1, 0:1, 0:6399, 0:1]
// CHECK-NOT: stablehlo.multiply
// CHECK: return %{{.*}} : tensor<1x1x6399xf32>
func.func @long_1d(%x: tensor<1x1x5120xf32>, %w: tensor<1x1x1280xf32>) -> tensor<1x1x6399xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {pad = [[1279, 1279]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x1x5120xf32>, tensor<1x1x1280xf32>) -> tensor<1x1x6399xf32>
  return %0 : tensor<1x1x6399xf32>
}

// -----

/// jax.vmap(jnp.convolve) over 8 signals (depthwise, NCW, 512 taps): 8 channels
/// x 4 segments of 128 taps fill the 32 channels of the depthwise convolution
/// (8 segments would make 64: more accumulators than registers); the segments'
/// sums read in place, runs of 8 channels.
// CHECK-LABEL: func.func @long_depthwise
// CHECK-COUNT-8: stablehlo.slice %{{.*}} -> tensor<1x1x4608x8xf32>
// CHECK: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: feature_group_count = 32
// CHECK-SAME: (tensor<1x4x1279x32xf32>, tensor<1x128x1x32xf32>) -> tensor<1x4x1152x32xf32>
// CHECK-COUNT-4: stablehlo.slice %{{.*}} -> tensor<1x4x1152x1x8x1xf32>
// CHECK-COUNT-3: stablehlo.add
// CHECK-NOT: stablehlo.multiply
// CHECK: return %{{.*}} : tensor<1x8x4607xf32>
func.func @long_depthwise(%x: tensor<1x8x4096xf32>, %w: tensor<8x1x512xf32>) -> tensor<1x8x4607xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {pad = [[511, 511]]}
       {batch_group_count = 1 : i64, feature_group_count = 8 : i64}
       : (tensor<1x8x4096xf32>, tensor<8x1x512xf32>) -> tensor<1x8x4607xf32>
  return %0 : tensor<1x8x4607xf32>
}

// -----

/// A 31x31 kernel over a 256x256 image (jax.scipy.signal.convolve2d): the rows
/// of 16-position chunks, the 31x31 window kept (31 columns, a prime: segments
/// of one column would take 31 x 16 lanes, so the taps stay one sequence).
// CHECK-LABEL: func.func @image_31x31
// CHECK-COUNT-3: stablehlo.slice %{{.*}} -> tensor<1x286x256x1xf32>
// CHECK: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: feature_group_count = 16
// CHECK-SAME: (tensor<1x286x46x16xf32>, tensor<31x31x1x16xf32>) -> tensor<1x256x16x16xf32>
// CHECK-NOT: stablehlo.multiply
// CHECK: return %{{.*}} : tensor<1x1x256x256xf32>
func.func @image_31x31(%x: tensor<1x1x256x256xf32>, %w: tensor<1x1x31x31xf32>) -> tensor<1x1x256x256xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[15, 15], [15, 15]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x1x256x256xf32>, tensor<1x1x31x31xf32>) -> tensor<1x1x256x256xf32>
  return %0 : tensor<1x1x256x256xf32>
}

// -----

/// A 21x21 kernel over a 63x63 image (jax.scipy.signal.convolve2d): 21 columns
/// split into 3 segments of 7 (147 taps each) x 16 chunks take 48 lanes, the
/// wider limit taken because 32 lanes would leave one segment; 3 blocks of
/// windows per segment, the segments' sums added in a tree.
// CHECK-LABEL: func.func @image_21x21
// CHECK-COUNT-9: stablehlo.slice %{{.*}} -> tensor<1x83x64x1xf32>
// CHECK: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: feature_group_count = 48
// CHECK-SAME: (tensor<1x83x10x48xf32>, tensor<21x7x1x48xf32>) -> tensor<1x63x4x48xf32>
// CHECK-COUNT-3: stablehlo.slice %{{.*}} -> tensor<1x63x4x1x1x16xf32>
// CHECK-COUNT-2: stablehlo.add
// CHECK-NOT: stablehlo.multiply
// CHECK: return %{{.*}} : tensor<1x1x63x63xf32>
func.func @image_21x21(%x: tensor<1x1x63x63xf32>, %w: tensor<1x1x21x21xf32>) -> tensor<1x1x63x63xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[10, 10], [10, 10]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x1x63x63xf32>, tensor<1x1x21x21xf32>) -> tensor<1x1x63x63xf32>
  return %0 : tensor<1x1x63x63xf32>
}

// -----

/// A filter bank (lax.conv_general_dilated NCW x OIW, 4 channels into 4 filters,
/// 512 taps, 'SAME'): lanes (segment, channel, filter): 4 segments of 128 taps
/// x 16 pairs = 64 lanes (8 segments would copy over BANK_WINDOWS); the windows
/// copied on the 4 input channels, then broadcast over the filters; the 16
/// partial sums (segments x channels) added in a tree of 15.
// CHECK-LABEL: func.func @filter_bank
// CHECK-COUNT-8: stablehlo.slice %{{.*}} -> tensor<8x1x4096x4xf32>
// CHECK: stablehlo.broadcast_in_dim %{{.*}}, dims = [0, 1, 2, 3, 5] : (tensor<8x4x1151x16x1xf32>) -> tensor<8x4x1151x16x4x1xf32>
// CHECK: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME: feature_group_count = 64
// CHECK-SAME: (tensor<8x4x1151x64xf32>, tensor<1x128x1x64xf32>) -> tensor<8x4x1024x64xf32>
// CHECK-COUNT-16: stablehlo.slice %{{.*}} -> tensor<1x8x4x1x1024x4xf32>
// CHECK-COUNT-15: stablehlo.add
// CHECK-NOT: stablehlo.add
// CHECK-NOT: stablehlo.multiply
// CHECK: return %{{.*}} : tensor<8x4x4096xf32>
func.func @filter_bank(%x: tensor<8x4x4096xf32>, %w: tensor<4x4x512xf32>) -> tensor<8x4x4096xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {pad = [[255, 256]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<8x4x4096xf32>, tensor<4x4x512xf32>) -> tensor<8x4x4096xf32>
  return %0 : tensor<8x4x4096xf32>
}
