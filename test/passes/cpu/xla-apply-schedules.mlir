// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=64})' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=1 vector-bytes=64})' --split-input-file | FileCheck %s --check-prefix=ONE
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=32})' --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=64 i1-vectors=false})' --split-input-file 2>&1 | FileCheck %s --check-prefix=NOI1

/// A matmul: each thread takes half of C (the zero fill fused in); 8x32 tiles
/// of C are vector accumulators carried across k, one contraction per k step.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<64x128xf32>, %[[B:.*]]: tensor<128x64xf32>)
// CHECK: scf.forall (%{{.*}}) in ({{[0-9]+}}) shared_outs(%[[C:.*]] = %{{.*}})
// CHECK: scf.for %[[K:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<8x32xf32>)
// CHECK-DAG: %[[AK:.*]] = vector.transfer_read %[[A]]{{.*}} vector<8x1xf32>
// CHECK-DAG: %[[BK:.*]] = vector.transfer_read %[[B]][%[[K]], {{.*}} vector<32xf32>
// CHECK: %[[BK2:.*]] = vector.shape_cast %[[BK]] : vector<32xf32> to vector<1x32xf32>
// CHECK: %[[NEXT:.*]] = vector.contract {{.*}} %[[AK]], %[[BK2]], %[[ACC]]
// CHECK: scf.yield %[[NEXT]] : vector<8x32xf32>
// CHECK-NOT: linalg.matmul
/// With one thread there is no parallel loop.
// ONE-LABEL: func.func @matmul
// ONE-NOT: scf.forall
// ONE: vector.contract
func.func @matmul(%a: tensor<64x128xf32>, %b: tensor<128x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

/// k long: blocks of 256 x 256, B packed before the register tiles read it.
/// AVX-512: chunks of columns (B is the larger operand), each 256 x 32 panel
/// of B copied into an aligned buffer of its own, row tiles inside the
/// column tile reading the copy.
// CHECK-LABEL: func.func @packed
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C256:.*]] iter_args
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} step %[[C32:.*]] iter_args
// CHECK: %[[PANEL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<256x32xf32>
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} vector<32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<32xf32>, memref<1x32xf32
// CHECK: %[[PACKED:.*]] = bufferization.to_tensor %[[PANEL]]
// CHECK: scf.for %{{.*}} step %[[C8:.*]] iter_args
// CHECK: vector.transfer_read %[[PACKED]]{{.*}} vector<32xf32>
// CHECK: vector.contract {{.*}} into vector<8x32xf32>
/// AVX2 (6 x 16 tiles; 4 x 16 here, dividing 128): the whole block packed
/// first, all of k in it (512 x 128: k up to 1024 is one block where the
/// block stays within 256 KiB), then row tiles outside column tiles.
// AVX2-LABEL: func.func @packed
// AVX2: scf.forall (%{{.*}}) in (8)
// AVX2: %[[BLOCK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<512x128xf32>
// AVX2: vector.transfer_write {{.*}} : vector<16xf32>, memref<1x16xf32
// AVX2: %[[PACKED:.*]] = bufferization.to_tensor %[[BLOCK]]
// AVX2: scf.for %{{.*}} step %[[C4:.*]] iter_args
// AVX2-NEXT: scf.for %{{.*}} step %[[C16:.*]] iter_args
// AVX2: vector.transfer_read %[[PACKED]]{{.*}} vector<16xf32>
// AVX2: vector.contract {{.*}} into vector<4x16xf32>
func.func @packed(%a: tensor<128x512xf32>, %b: tensor<512x1024xf32>) -> tensor<128x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x1024xf32>) -> tensor<128x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x512xf32>, tensor<512x1024xf32>) outs(%c : tensor<128x1024xf32>) -> tensor<128x1024xf32>
  return %r : tensor<128x1024xf32>
}

// -----

/// k short and B wider than A (an LM head): each thread takes chunks of
/// columns (all 64 rows), and each 128 x 32 panel of B is packed once and
/// read by every row tile, as for a long k (one k block here).
// CHECK-LABEL: func.func @lm_head
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs(%{{.*}}) -> (tensor<64x1024xf32>)
// CHECK: scf.for %{{.*}} = %{{.*}} step %[[C32:.*]] iter_args({{.*}}) -> (tensor<64x128xf32>)
// CHECK: %[[PANEL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x32xf32>
// CHECK: %[[PACKED:.*]] = bufferization.to_tensor %[[PANEL]]
// CHECK: scf.for %{{.*}} step %[[C8:.*]] iter_args({{.*}}) -> (tensor<64x32xf32>)
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT: linalg.matmul
func.func @lm_head(%a: tensor<64x128xf32>, %b: tensor<128x1024xf32>) -> tensor<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x1024xf32>) outs(%c : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

/// B made by a transpose of an n x k weight (PyTorch's Linear): the
/// transpose is fused into the column tiles, each 128 x 32 panel of B made
/// from 16 x 16 blocks of W transposed in registers (by two-row unpacks, as
/// the transpose kernels: one 256-lane shuffle spilled), and the row tiles
/// read the panel; no transposed copy of all of B.
// CHECK-LABEL: func.func @transposed_b
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<1024x128xf32>
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: scf.for %{{.*}} step %[[C32:.*]] iter_args
// CHECK: %[[PANEL:.*]] = scf.for
// CHECK: %[[BLOCK:.*]] = vector.transfer_read %[[W]]{{.*}} vector<16x16xf32>
// CHECK: vector.extract %[[BLOCK]][0]
// CHECK: vector.shuffle {{.*}} [0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29] : vector<16xf32>, vector<16xf32>
// CHECK-NOT: vector.transpose
// CHECK: vector.transfer_read %[[PANEL]]{{.*}} vector<32xf32>
// CHECK: vector.contract {{.*}} into vector<8x32xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.matmul
func.func @transposed_b(%a: tensor<64x128xf32>, %w: tensor<1024x128xf32>) -> tensor<64x1024xf32> {
  %bt = tensor.empty() : tensor<128x1024xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<1024x128xf32>) outs(%bt : tensor<128x1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<128x1024xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x1024xf32>) outs(%c : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

/// B widened from bf16 (xla-widen-contractions' convert): the widening is
/// the packing. AVX-512 makes each 256 x 32 panel in 16 x 16 blocks; AVX2
/// writes all of k (512) of B's 128 columns in f32 as one whole-k block
/// (whole_k_widened_b_avx2), a vector row of bf16 widened at a time, and
/// the row tiles read that block over all of k: no f32 copy of all of B,
/// no copy of the block, no k-block loop.
// CHECK-LABEL: func.func @widened_b
// CHECK: vector.transfer_read {{.*}} vector<16x16xbf16>
// CHECK: arith.extf {{.*}} : vector<16x16xbf16> to vector<16x16xf32>
// CHECK: vector.contract {{.*}} into vector<8x32xf32>
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @widened_b
// AVX2-SAME: %[[W:[a-z0-9]+]]: tensor<512x128xbf16>
// AVX2: scf.forall (%{{.*}}) in (8)
// AVX2-NOT: step %c256
// AVX2: %[[BLOCK:.*]] = scf.for {{.*}} -> (tensor<512x128xf32>)
// AVX2: %[[ROW:.*]] = vector.transfer_read %[[W]]{{.*}} vector<16xbf16>
// AVX2: arith.extf %[[ROW]] : vector<16xbf16> to vector<16xf32>
// AVX2: vector.transfer_read %[[BLOCK]]{{.*}} vector<16xf32>
// AVX2: vector.contract {{.*}} into vector<6x16xf32>
// AVX2-NOT: linalg.generic
// AVX2-NOT: memref.alloc
func.func @widened_b(%a: tensor<576x512xf32>, %w: tensor<512x128xbf16>) -> tensor<576x128xf32> {
  %bt = tensor.empty() : tensor<512x128xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<512x128xbf16>) outs(%bt : tensor<512x128xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<512x128xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<576x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<576x128xf32>) -> tensor<576x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<576x512xf32>, tensor<512x128xf32>) outs(%c : tensor<576x128xf32>) -> tensor<576x128xf32>
  return %r : tensor<576x128xf32>
}

// -----

/// f64: as many registers as f32, half the lanes: 8 x 16 tiles with AVX-512,
/// 4 x 8 (6 rows at most, 4 dividing 64) with AVX2; B packed as f32's is.
// CHECK-LABEL: func.func @f64_matmul
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<256x16xf64>
// CHECK: vector.contract {{.*}} : vector<8x1xf64>, vector<1x16xf64> into vector<8x16xf64>
// AVX2-LABEL: func.func @f64_matmul
// AVX2: memref.alloc() {alignment = 64 : i64} : memref<256x64xf64>
// AVX2: vector.contract {{.*}} : vector<4x1xf64>, vector<1x8xf64> into vector<4x8xf64>
func.func @f64_matmul(%a: tensor<64x512xf64>, %b: tensor<512x64xf64>) -> tensor<64x64xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<64x64xf64>
  %c = linalg.fill ins(%zero : f64) outs(%empty : tensor<64x64xf64>) -> tensor<64x64xf64>
  %r = linalg.matmul ins(%a, %b : tensor<64x512xf64>, tensor<512x64xf64>) outs(%c : tensor<64x64xf64>) -> tensor<64x64xf64>
  return %r : tensor<64x64xf64>
}

// -----

/// A convolution whose filter (3x3x512x512, 9.4 MB) is larger than its input
/// (7x7 pixels): threads take chunks of filters, the filters' loop runs
/// outside the pixels', and each 3x3x512x32 filter slice is copied into an
/// aligned buffer once and read by every output row (1-D tiles of 7 pixels
/// x 32 filters, one contraction over 16 channels per tap).
// CHECK-LABEL: func.func @conv_filters_outer
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: tensor.extract_slice %{{.*}} [3, 3, 512, 64]
// CHECK: scf.for %{{.*}} step %[[C32:.*]] iter_args
// CHECK: %[[SLICE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x3x512x32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<32xf32>, memref<1x1x1x32xf32
// CHECK: %[[PACKED:.*]] = bufferization.to_tensor %[[SLICE]]
// CHECK: scf.for
// CHECK: vector.transfer_read %[[PACKED]]{{.*}} vector<16x32xf32>
// CHECK: vector.contract {{.*}} : vector<7x16xf32>, vector<16x32xf32> into vector<7x32xf32>
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
/// With AVX2, the same order in 7 x 16 tiles (14 accumulators: the
/// micro-kernel call reads B's second vector from memory).
// AVX2-LABEL: func.func @conv_filters_outer
// AVX2: memref.alloc() {alignment = 64 : i64} : memref<3x3x512x16xf32>
// AVX2: vector.contract {{.*}} into vector<7x16xf32>
func.func @conv_filters_outer(%x: tensor<2x9x9x512xf32>, %w: tensor<3x3x512x512xf32>) -> tensor<2x7x7x512xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x7x7x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x7x7x512xf32>) -> tensor<2x7x7x512xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<2x9x9x512xf32>, tensor<3x3x512x512xf32>) outs(%c : tensor<2x7x7x512xf32>) -> tensor<2x7x7x512xf32>
  return %r : tensor<2x7x7x512xf32>
}

// -----

/// A filter (3x3x256x128, 1.2 MB) out of cache but smaller than its input (the
/// U-Net's 2x32x32x256 pixels): pixels outside would read all of it once per
/// pixel tile (512 times), filters outside read the input once per filter
/// slice (8 or 4 times), so the filters go outside here too.
// CHECK-LABEL: func.func @conv_filters_outer_larger_input
// CHECK: scf.forall
// CHECK: tensor.extract_slice %{{.*}} [3, 3, 256, 32]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<3x3x256x32xf32>
// CHECK: vector.contract {{.*}} into vector<8x32xf32>
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
/// AVX2's tiles: 2 pixels x 4 vectors of filters (no 6 x 16 or 4 x 24 tile divides).
// AVX2-LABEL: func.func @conv_filters_outer_larger_input
// AVX2: scf.forall (%{{.*}}, %{{.*}}) in (2, 4)
// AVX2: memref.alloc() {alignment = 64 : i64} : memref<3x3x256x32xf32>
// AVX2: vector.contract {{.*}} into vector<2x32xf32>
// AVX2-NOT: linalg.conv_2d_nhwc_hwcf
func.func @conv_filters_outer_larger_input(%x: tensor<2x34x34x256xf32>, %w: tensor<3x3x256x128xf32>) -> tensor<2x32x32x128xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x32x32x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x32x32x128xf32>) -> tensor<2x32x32x128xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<2x34x34x256xf32>, tensor<3x3x256x128xf32>) outs(%c : tensor<2x32x32x128xf32>) -> tensor<2x32x32x128xf32>
  return %r : tensor<2x32x32x128xf32>
}

// -----

/// A filter out of cache (1x1x1024x144, 590 KB) on a stride-3 input (2.4 MB):
/// pixels outside read the filter once per pixel tile, 8 or 16 times (4.7 or
/// 9.4 MB); filters outside would read the input once per 16-filter slice,
/// 9 times (21 MB), so the pixels stay outside and no slice is packed.
// CHECK-LABEL: func.func @conv_pixels_outer
// CHECK-NOT: memref.alloc
// CHECK: vector.contract
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// AVX2-LABEL: func.func @conv_pixels_outer
// AVX2-NOT: memref.alloc
// AVX2: vector.contract
// AVX2-NOT: linalg.conv_2d_nhwc_hwcf
func.func @conv_pixels_outer(%x: tensor<1x24x24x1024xf32>, %w: tensor<1x1x1024x144xf32>) -> tensor<1x8x8x144xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x8x8x144xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8x8x144xf32>) -> tensor<1x8x8x144xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<3> : tensor<2xi64>}
    ins(%x, %w : tensor<1x24x24x1024xf32>, tensor<1x1x1024x144xf32>) outs(%c : tensor<1x8x8x144xf32>) -> tensor<1x8x8x144xf32>
  return %r : tensor<1x8x8x144xf32>
}

// -----

/// 33 filters and 17 channels on 30-pixel rows: tiles of whole vectors, the
/// last, short step of the filters' (33 = 32 + 1 or 16 + 16 + 1), the
/// pixels' (30 = 3 x 8 + 6) and the channels' loops (17 = 16 + 1 or 8 + 8 + 1)
/// peeled, every tile static; not one 11-filter tile on 1-channel steps.
// CHECK-LABEL: func.func @conv_filter_tail
// CHECK-DAG: vector.contract {{.*}} : vector<8x16xf32>, vector<16x32xf32> into vector<8x32xf32>
// CHECK-DAG: vector.contract {{.*}} : vector<6x16xf32>, vector<16x32xf32> into vector<6x32xf32>
// CHECK-DAG: vector.contract {{.*}} : vector<8x16xf32>, vector<16x1xf32> into vector<8x1xf32>
// CHECK-DAG: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// AVX2-LABEL: func.func @conv_filter_tail
// AVX2-DAG: vector.contract {{.*}} : vector<6x8xf32>, vector<8x16xf32> into vector<6x16xf32>
// AVX2-DAG: vector.contract {{.*}} : vector<6x8xf32>, vector<8x1xf32> into vector<6x1xf32>
// AVX2-DAG: vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX2-NOT: vector<6x11xf32>
// AVX2-NOT: linalg.conv_2d_nhwc_hwcf
func.func @conv_filter_tail(%x: tensor<2x32x32x17xf32>, %w: tensor<3x3x17x33xf32>) -> tensor<2x30x30x33xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x30x30x33xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x30x30x33xf32>) -> tensor<2x30x30x33xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<2x32x32x17xf32>, tensor<3x3x17x33xf32>) outs(%c : tensor<2x30x30x33xf32>) -> tensor<2x30x30x33xf32>
  return %r : tensor<2x30x30x33xf32>
}

// -----

/// Elementwise f32 with a transcendental: 64 lanes at a time (four AVX-512
/// registers, for the polynomial's latency); too small to split.
// CHECK-LABEL: func.func @tanh
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK: %[[V:.*]] = vector.transfer_read {{.*}} vector<64xf32>
// CHECK: math.tanh %[[V]] : vector<64xf32>
// CHECK-NOT: linalg.generic
// ONE-LABEL: func.func @tanh
func.func @tanh(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %empty = tensor.empty() : tensor<4096xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4096xf32>) outs(%empty : tensor<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

// -----

/// Row sums: rows split between the threads; each row is summed into a
/// 16-lane accumulator, folded to one value at the row's end.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.forall (%{{.*}}) in ({{[0-9]+}})
// CHECK: %[[SUM:.*]] = scf.for {{.*}} -> (vector<16xf32>)
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: %[[ROW:.*]] = vector.shape_cast %[[SUM]] : vector<16xf32> to vector<1x16xf32>
// CHECK: vector.multi_reduction <add>, %[[ROW]]
// ONE-LABEL: func.func @row_sum
// ONE-NOT: scf.forall
func.func @row_sum(%x: tensor<256x1024xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<256x1024xf32>) outs(%init : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// -----

/// A sum over a contiguous dim of 3 (x, y, z): 16 masked lanes would carry
/// 3 values, so the 16 lanes run along the next dim instead (strided reads),
/// the 3 added one after another ("cols").
// CHECK-LABEL: func.func @xyz_sum
// CHECK: scf.forall
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C3:.*]] step
// CHECK: vector.transfer_read %{{.*}} : tensor<256x256x3xf32>, vector<16x1xf32>
// CHECK: arith.addf {{.*}} : vector<16xf32>
func.func @xyz_sum(%x: tensor<256x256x3xf32>) -> tensor<256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<256x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<256x256x3xf32>) outs(%init : tensor<256x256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// -----

/// Complex numbers have no vector form: the op is left for scalar loops.
// CHECK-LABEL: func.func @complex_exp
// CHECK: linalg.generic
// CHECK: complex.exp %{{.*}} : complex<f32>
// ONE-LABEL: func.func @complex_exp
func.func @complex_exp(%x: tensor<4096xcomplex<f32>>) -> tensor<4096xcomplex<f32>> {
  %empty = tensor.empty() : tensor<4096xcomplex<f32>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4096xcomplex<f32>>) outs(%empty : tensor<4096xcomplex<f32>>) {
  ^bb0(%in: complex<f32>, %out: complex<f32>):
    %t = complex.exp %in : complex<f32>
    linalg.yield %t : complex<f32>
  } -> tensor<4096xcomplex<f32>>
  return %r : tensor<4096xcomplex<f32>>
}

// -----

/// A transpose of the two innermost dims: 16x16 blocks read by rows and
/// transposed in registers, not gathered element by element: four rounds of
/// two-row unpacks (AVX-512 and AVX2 alike).
// CHECK-LABEL: func.func @transpose
// CHECK: scf.forall
// CHECK: %[[BLOCK:.*]] = vector.transfer_read {{.*}} : tensor<1024x1024xf32>, vector<16x16xf32>
// CHECK: %[[ROW0:.*]] = vector.extract %[[BLOCK]][0] : vector<16xf32> from vector<16x16xf32>
// CHECK: %[[ROW1:.*]] = vector.extract %[[BLOCK]][1] : vector<16xf32> from vector<16x16xf32>
// CHECK: vector.shuffle %[[ROW0]], %[[ROW1]] [0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29] : vector<16xf32>, vector<16xf32>
// CHECK-NOT: vector.transpose
// ONE-LABEL: func.func @transpose
// ONE-NOT: scf.forall
// ONE: vector.shuffle
// AVX2-LABEL: func.func @transpose
// AVX2: vector.transfer_read {{.*}} : tensor<1024x1024xf32>, vector<16x16xf32>
// AVX2: vector.shuffle {{.*}} [0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29] : vector<16xf32>, vector<16xf32>
func.func @transpose(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %e = tensor.empty() : tensor<1024x1024xf32>
  %t = linalg.transpose ins(%a : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) permutation = [1, 0]
  return %t : tensor<1024x1024xf32>
}

// -----

/// Complex numbers as pairs of their parts (xla-complex-as-pairs: c64 as
/// [..., 2] f32): the parts' dim stays last and two others swap. 4x4 blocks
/// of pairs, both parts, read by rows of the input's pairs and each pair put
/// in its new place in registers; not one pair at a time from another row.
// CHECK-LABEL: func.func @transpose_pairs
// CHECK: scf.forall
// CHECK: %[[BLOCK:.*]] = vector.transfer_read {{.*}} : tensor<256x512x2xf32>, vector<4x4x2xf32>
// CHECK: vector.extract %[[BLOCK]][0, 1] : vector<2xf32> from vector<4x4x2xf32>
// CHECK: vector.transfer_write {{.*}} : vector<4x4x2xf32>, tensor<
// CHECK-NOT: vector.gather
// AVX2-LABEL: func.func @transpose_pairs
// AVX2: vector.transfer_read {{.*}} : tensor<256x512x2xf32>, vector<4x4x2xf32>
func.func @transpose_pairs(%a: tensor<256x512x2xf32>) -> tensor<512x256x2xf32> {
  %e = tensor.empty() : tensor<512x256x2xf32>
  %t = linalg.transpose ins(%a : tensor<256x512x2xf32>) outs(%e : tensor<512x256x2xf32>) permutation = [1, 0, 2]
  return %t : tensor<512x256x2xf32>
}

// -----

/// c128 pairs ([..., 2] f64), the innermost two complex dims of three swapped:
/// the same blocks, one of the outer dim at a time.
// CHECK-LABEL: func.func @transpose_pairs_3d
// CHECK: vector.transfer_read {{.*}} : tensor<4x64x128x2xf64>, vector<4x4x2xf64>
// CHECK-NOT: vector.gather
func.func @transpose_pairs_3d(%a: tensor<4x64x128x2xf64>) -> tensor<4x128x64x2xf64> {
  %e = tensor.empty() : tensor<4x128x64x2xf64>
  %t = linalg.transpose ins(%a : tensor<4x64x128x2xf64>) outs(%e : tensor<4x128x64x2xf64>) permutation = [0, 2, 1, 3]
  return %t : tensor<4x128x64x2xf64>
}

// -----

/// Bytes: the same 16x16 blocks and unpacks, on AVX2 as on AVX-512.
// CHECK-LABEL: func.func @transpose_bytes
// CHECK: vector.transfer_read {{.*}} : tensor<512x1024xi8>, vector<16x16xi8>
// CHECK: vector.shuffle {{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xi8>, vector<16xi8>
// CHECK-NOT: vector.gather
// AVX2-LABEL: func.func @transpose_bytes
// AVX2: vector.transfer_read {{.*}} : tensor<512x1024xi8>, vector<16x16xi8>
// AVX2: vector.shuffle {{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xi8>, vector<16xi8>
func.func @transpose_bytes(%a: tensor<512x1024xi8>) -> tensor<1024x512xi8> {
  %e = tensor.empty() : tensor<1024x512xi8>
  %t = linalg.transpose ins(%a : tensor<512x1024xi8>) outs(%e : tensor<1024x512xi8>) permutation = [1, 0]
  return %t : tensor<1024x512xi8>
}

// -----

/// An add reading one operand transposed (x.T + y, the transpose fused into
/// its loops): the same blocks, the transposed operand read as rows of x and
/// transposed in registers, the other read as rows; no gather per vector.
/// 8-byte elements: 8x8 blocks, one shuffle of the flattened block.
// CHECK-LABEL: func.func @add_transposed
// CHECK: scf.forall
// CHECK: %[[X:.*]] = vector.transfer_read %arg0{{.*}} : tensor<512x256xf64>, vector<8x8xf64>
// CHECK: %[[FLAT:.*]] = vector.shape_cast %[[X]] : vector<8x8xf64> to vector<64xf64>
// CHECK: %[[MOVED:.*]] = vector.shuffle %[[FLAT]], %{{.*}} [0, 8, 16, {{.*}}] : vector<64xf64>, vector<64xf64>
// CHECK: %[[XT:.*]] = vector.shape_cast %[[MOVED]] : vector<64xf64> to vector<8x8xf64>
// CHECK: %[[Y:.*]] = vector.transfer_read %arg1{{.*}} : tensor<256x512xf64>, vector<8x8xf64>
// CHECK: arith.addf %[[XT]], %[[Y]] : vector<8x8xf64>
// CHECK-NOT: vector.gather
// AVX2-LABEL: func.func @add_transposed
// AVX2: vector.transfer_read %arg0{{.*}} : tensor<512x256xf64>, vector<8x8xf64>
// AVX2: vector.shuffle {{.*}} [0, 8, 16, {{.*}}] : vector<64xf64>, vector<64xf64>
#xt = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @add_transposed(%x: tensor<512x256xf64>, %y: tensor<256x512xf64>) -> tensor<256x512xf64> {
  %e = tensor.empty() : tensor<256x512xf64>
  %r = linalg.generic {indexing_maps = [#xt, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<512x256xf64>, tensor<256x512xf64>) outs(%e : tensor<256x512xf64>) {
  ^bb0(%a: f64, %b: f64, %out: f64):
    %s = arith.addf %a, %b : f64
    linalg.yield %s : f64
  } -> tensor<256x512xf64>
  return %r : tensor<256x512xf64>
}

// -----

/// Softmax: max, exp, sum and divide fused per row. One parallel loop over
/// the divide's rows; inside each row the max and sum are 16-lane vector
/// reductions and exp/divide are vectorized; exp gets a tensor of its own
/// (not a slice of the output), so bufferization needs no copy.
// CHECK-LABEL: func.func @softmax
// CHECK: scf.forall (%{{.*}}) in ({{[0-9]+}}) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK: scf.for
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.multi_reduction <maximumf>
// CHECK: %[[EXP:.*]] = math.exp {{.*}} : vector<64xf32>
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: vector.multi_reduction <add>
// CHECK: arith.divf {{.*}} : vector<64xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.
// ONE-LABEL: func.func @softmax
// ONE-NOT: scf.forall
// ONE: math.exp {{.*}} : vector<64xf32>
// ONE-NOT: linalg.
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
func.func @softmax(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %rows = tensor.empty() : tensor<1024xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%rows : tensor<1024xf32>) -> tensor<1024xf32>
  %max = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1024x256xf32>) outs(%minit : tensor<1024xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<1024xf32>
  %full = tensor.empty() : tensor<1024x256xf32>
  %exp = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<1024x256xf32>, tensor<1024xf32>) outs(%full : tensor<1024x256xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<1024x256xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%rows : tensor<1024xf32>) -> tensor<1024xf32>
  %sum = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<1024x256xf32>) outs(%sinit : tensor<1024xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<1024x256xf32>, tensor<1024xf32>) outs(%full : tensor<1024x256xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<1024x256xf32>
  return %r : tensor<1024x256xf32>
}

// -----

/// Softmax over rows of 197 (ViT's tokens), no multiple of the vector: the
/// max and sum loops carry their 16-lane accumulators in registers over whole
/// steps, and the exp and divide loops run whole vectors unmasked; each peels
/// the row's last partial vector off into one masked step after the loop
/// (masked in every step they were several times slower, the reductions'
/// accumulators read and written under a mask every step). exp is computed
/// once per row, its one loop read by both the sum and the divide.
// CHECK-LABEL: func.func @softmax_odd_rows
// CHECK: scf.for %{{.*}} = %c0 to %c192 step %c16 iter_args(%{{.*}}) -> (vector<16xf32>)
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: scf.yield
// CHECK: %[[MAX_TAIL:.*]] = vector.constant_mask [5] : vector<16xi1>
// CHECK: vector.transfer_read {{.*}}, %[[MAX_TAIL]]
// CHECK: vector.multi_reduction <maximumf>
// CHECK: scf.for %{{.*}} = %c0 to %c192 step
// CHECK: math.exp {{.*}} : vector<{{[0-9]+}}xf32>
// CHECK-NEXT: vector.transfer_write %{{[0-9]+}}, %{{[a-z_0-9]+}}[%c0, %c0] {in_bounds
// CHECK: scf.yield
// CHECK: %[[EXP_TAIL:.*]] = vector.constant_mask [5]
// CHECK: vector.transfer_read {{.*}}, %[[EXP_TAIL]]
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: scf.for %{{.*}} = %c0 to %c192 step %c16 iter_args(%{{.*}}) -> (vector<16xf32>)
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: scf.yield
// CHECK: vector.multi_reduction <add>
// CHECK-NOT: math.exp
// CHECK: scf.for %{{.*}} = %c0 to %c192 step
// CHECK: arith.divf {{.*}} : vector<{{[0-9]+}}xf32>
// CHECK-NEXT: vector.transfer_write %{{[0-9]+}}, %{{[a-z_0-9]+}}[%c0, %c0] {in_bounds
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK-NEXT: vector.transfer_write {{.*}}[%c0, %c0], %{{[0-9]+}} {in_bounds
// AVX2-LABEL: func.func @softmax_odd_rows
// AVX2: scf.for %{{.*}} = %c0 to %c192 step %c16 iter_args(%{{.*}}) -> (vector<16xf32>)
// AVX2: arith.maximumf {{.*}} : vector<16xf32>
// AVX2: scf.yield
// AVX2: %[[MAX_TAIL:.*]] = vector.constant_mask [5] : vector<16xi1>
// AVX2: vector.transfer_read {{.*}}, %[[MAX_TAIL]]
// AVX2: vector.multi_reduction <maximumf>
// AVX2: scf.for %{{.*}} = %c0 to %c192 step
// AVX2: math.exp {{.*}} : vector<{{[0-9]+}}xf32>
// AVX2-NEXT: vector.transfer_write %{{[0-9]+}}, %{{[a-z_0-9]+}}[%c0, %c0] {in_bounds
// AVX2: scf.yield
// AVX2: %[[EXP_TAIL:.*]] = vector.constant_mask [5]
// AVX2: vector.transfer_read {{.*}}, %[[EXP_TAIL]]
// AVX2: math.exp
// AVX2-NOT: math.exp
// AVX2: scf.for %{{.*}} = %c0 to %c192 step %c16 iter_args(%{{.*}}) -> (vector<16xf32>)
// AVX2: arith.addf {{.*}} : vector<16xf32>
// AVX2: scf.yield
// AVX2: vector.multi_reduction <add>
// AVX2-NOT: math.exp
// AVX2: scf.for %{{.*}} = %c0 to %c192 step
// AVX2: arith.divf {{.*}} : vector<{{[0-9]+}}xf32>
// AVX2-NEXT: vector.transfer_write %{{[0-9]+}}, %{{[a-z_0-9]+}}[%c0, %c0] {in_bounds
// AVX2: scf.yield
// AVX2: arith.divf
// AVX2-NEXT: vector.transfer_write {{.*}}[%c0, %c0], %{{[0-9]+}} {in_bounds
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
func.func @softmax_odd_rows(%x: tensor<96x197xf32>) -> tensor<96x197xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %rows = tensor.empty() : tensor<96xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%rows : tensor<96xf32>) -> tensor<96xf32>
  %max = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<96x197xf32>) outs(%minit : tensor<96xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<96xf32>
  %full = tensor.empty() : tensor<96x197xf32>
  %exp = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<96x197xf32>, tensor<96xf32>) outs(%full : tensor<96x197xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<96x197xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%rows : tensor<96xf32>) -> tensor<96xf32>
  %sum = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<96x197xf32>) outs(%sinit : tensor<96xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<96xf32>
  %r = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<96x197xf32>, tensor<96xf32>) outs(%full : tensor<96x197xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<96x197xf32>
  return %r : tensor<96x197xf32>
}

// -----

/// A pooling whose input is padded for it alone (SAME 3x3/2 max pooling):
/// each thread pads the input rows of its chunk, so no padded copy of the
/// whole input is made on one thread before the pooling.
// CHECK-LABEL: func.func @padded_max_pool
// CHECK-NOT: tensor.pad
// CHECK: scf.forall
// CHECK: tensor.pad
// CHECK: vector.transfer_read {{.*}} vector<15x64xf32>
// CHECK: arith.maximumf {{.*}} : vector<64xf32>
// CHECK-NOT: linalg.pooling_nhwc_max
func.func @padded_max_pool(%x: tensor<2x112x112x64xf32>) -> tensor<2x56x56x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %x low[0, 0, 0, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<2x112x112x64xf32> to tensor<2x113x113x64xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %empty = tensor.empty() : tensor<2x56x56x64xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%empty : tensor<2x56x56x64xf32>) -> tensor<2x56x56x64xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%padded, %window : tensor<2x113x113x64xf32>, tensor<3x3xf32>) outs(%init : tensor<2x56x56x64xf32>) -> tensor<2x56x56x64xf32>
  return %r : tensor<2x56x56x64xf32>
}

// -----

/// A row max under an i1 mask (a padding mask): the row schedule reads the mask
/// as vectors of i1 (xla-i1-memory-as-i8 makes them byte moves). Without i1
/// vectors the op's rows are still split among the threads (scalar loops
/// inside each chunk), said in a remark that names i1.
// CHECK-LABEL: func.func @masked_row_max
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: vector.transfer_read {{.*}} : tensor<512x256xi1>, vector<16xi1>
// CHECK: arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.multi_reduction <maximumf>
// NOI1: remark: xla-apply-schedules: no vector schedule for linalg.generic (131072 iterations) on 512x256xf32, 512x256xi1, 512xf32 -> 512xf32: element type i1 not supported
// NOI1-LABEL: func.func @masked_row_max
// NOI1: scf.forall (%{{.*}}) in (8)
// NOI1: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x256xf32>, tensor<64x256xi1>) outs(%{{.*}} : tensor<64xf32>)
// NOI1: tensor.parallel_insert_slice
func.func @masked_row_max(%x: tensor<512x256xf32>, %keep: tensor<512x256xi1>) -> tensor<512xf32> {
  %low = arith.constant 0xFF800000 : f32
  %empty = tensor.empty() : tensor<512xf32>
  %init = linalg.fill ins(%low : f32) outs(%empty : tensor<512xf32>) -> tensor<512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %keep : tensor<512x256xf32>, tensor<512x256xi1>) outs(%init : tensor<512xf32>) {
  ^bb0(%in: f32, %k: i1, %out: f32):
    %v = arith.select %k, %in, %low : f32
    %m = arith.maximumf %out, %v : f32
    linalg.yield %m : f32
  } -> tensor<512xf32>
  return %r : tensor<512xf32>
}

// -----

/// f32 rows summed in f64 (PyTorch's layer norm statistics): the row
/// schedule's 16-lane partial sums, in f64.
// CHECK-LABEL: func.func @f64_row_sums
// CHECK: scf.forall
// CHECK: arith.extf {{.*}} : vector<16xf32> to vector<16xf64>
// CHECK: arith.addf {{.*}} : vector<16xf64>
// CHECK: vector.multi_reduction <add>, {{.*}} : vector<1x16xf64> to vector<1xf64>
func.func @f64_row_sums(%x: tensor<512x256xf32>) -> tensor<512xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<512xf64>
  %init = linalg.fill ins(%zero : f64) outs(%empty : tensor<512xf64>) -> tensor<512xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<512x256xf32>) outs(%init : tensor<512xf64>) {
  ^bb0(%in: f32, %out: f64):
    %w = arith.extf %in : f32 to f64
    %s = arith.addf %out, %w : f64
    linalg.yield %s : f64
  } -> tensor<512xf64>
  return %r : tensor<512xf64>
}

// -----

/// A 64-element row added in place once per index of a 4,096-trip loop (a
/// segment sum's scatter): small alone, 262,144 iterations in all, so it is
/// vectorized (16 lanes, no thread split inside the loop).
// CHECK-LABEL: func.func @row_in_a_loop
// CHECK: scf.for
// CHECK-NOT: scf.forall
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @row_in_a_loop(%acc: tensor<512x64xf32>, %upd: tensor<4096x64xf32>, %idx: tensor<4096xindex>) -> tensor<512x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4096 : index
  %r = scf.for %s = %c0 to %n step %c1 iter_args(%a = %acc) -> (tensor<512x64xf32>) {
    %i = tensor.extract %idx[%s] : tensor<4096xindex>
    %old = tensor.extract_slice %a[%i, 0] [1, 64] [1, 1] : tensor<512x64xf32> to tensor<64xf32>
    %u = tensor.extract_slice %upd[%s, 0] [1, 64] [1, 1] : tensor<4096x64xf32> to tensor<64xf32>
    %new = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
        ins(%u : tensor<64xf32>) outs(%old : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %sum = arith.addf %out, %in : f32
      linalg.yield %sum : f32
    } -> tensor<64xf32>
    %put = tensor.insert_slice %new into %a[%i, 0] [1, 64] [1, 1] : tensor<64xf32> into tensor<512x64xf32>
    scf.yield %put : tensor<512x64xf32>
  }
  return %r : tensor<512x64xf32>
}

// -----

/// The same row in a sorted segment sum's chunks: an scf.forall of 16
/// chunks around a loop of unknown length. The chunks count (16 x 64
/// iterations at least), so the row is vectorized.
// CHECK-LABEL: func.func @row_in_parallel_chunks
// CHECK: scf.forall (%{{.*}}) in (16)
// CHECK: scf.for
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @row_in_parallel_chunks(%acc: tensor<16x64xf32>, %upd: tensor<4096x64xf32>, %idx: tensor<4096xindex>, %n: index) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.forall (%t) in (16) shared_outs(%o = %acc) -> (tensor<16x64xf32>) {
    %mine = tensor.extract_slice %o[%t, 0] [1, 64] [1, 1] : tensor<16x64xf32> to tensor<64xf32>
    %done = scf.for %s = %c0 to %n step %c1 iter_args(%a = %mine) -> (tensor<64xf32>) {
      %u = tensor.extract_slice %upd[%s, 0] [1, 64] [1, 1] : tensor<4096x64xf32> to tensor<64xf32>
      %new = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                             iterator_types = ["parallel"]}
          ins(%u : tensor<64xf32>) outs(%a : tensor<64xf32>) {
      ^bb0(%in: f32, %out: f32):
        %sum = arith.addf %out, %in : f32
        linalg.yield %sum : f32
      } -> tensor<64xf32>
      scf.yield %new : tensor<64xf32>
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %done into %o[%t, 0] [1, 64] [1, 1] : tensor<64xf32> into tensor<16x64xf32>
    }
  }
  return %r : tensor<16x64xf32>
}
