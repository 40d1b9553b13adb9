// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-normalize-contractions)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-normalize-contractions{outline=true})' --split-input-file | FileCheck %s --check-prefix=OUTLINE

/// Attention's Q.K^T: K is transposed once, then one linalg.batch_matmul.
// CHECK-LABEL: func.func @q_kt
// CHECK: %[[C:.*]] = linalg.fill
// CHECK: call @[[HELPER:[a-z_0-9]+]](%{{.*}}, %{{.*}}, %[[C]])
// CHECK: func.func private @[[HELPER]](%[[Q:.*]]: tensor<8x512x64xf32>, %[[K:.*]]: tensor<8x512x64xf32>, %[[INIT:.*]]: tensor<8x512x512xf32>)
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<8x512x64xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK: %[[R:.*]] = linalg.batch_matmul ins(%[[Q]], %[[KT]] : {{.*}}) outs(%[[INIT]] : tensor<8x512x512xf32>)
// CHECK: return %[[R]]
/// outline=true only moves the generic into a function of its own.
// OUTLINE-LABEL: func.func @q_kt
// OUTLINE: call @[[HELPER:[a-z_0-9]+]](
// OUTLINE: func.func private @[[HELPER]](
// OUTLINE: linalg.generic
// OUTLINE-NOT: linalg.batch_matmul
func.func @q_kt(%q: tensor<8x512x64xf32>, %k: tensor<8x512x64xf32>) -> tensor<8x512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x512x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<8x512x64xf32>, tensor<8x512x64xf32>) outs(%c : tensor<8x512x512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x512x512xf32>
  return %r : tensor<8x512x512xf32>
}

// -----

/// P.V with V first ([b, k, d] x [b, q, k] -> [b, d, q], as flax's attention
/// in a U-Net comes): as written, the 1024 x 1024 probabilities P would be
/// transposed; with the operands swapped (C^T = P.V), P is read as it is and
/// only V and the 1024 x 32 result are transposed.
// CHECK-LABEL: func.func @p_v_swapped
// CHECK: func.func private @{{.*}}(%[[V:.*]]: tensor<8x1024x32xf32>, %[[P:.*]]: tensor<8x1024x1024xf32>, %[[INIT:.*]]: tensor<8x32x1024xf32>)
// CHECK-NOT: linalg.transpose ins(%[[P]]
// CHECK: %[[CT:.*]] = linalg.batch_matmul ins(%[[P]], %[[V]] : tensor<8x1024x1024xf32>, tensor<8x1024x32xf32>)
// CHECK: linalg.transpose ins(%[[CT]] : tensor<8x1024x32xf32>) {{.*}} permutation = [0, 2, 1]
func.func @p_v_swapped(%v: tensor<8x1024x32xf32>, %p: tensor<8x1024x1024xf32>) -> tensor<8x32x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x32x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x32x1024xf32>) -> tensor<8x32x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v, %p : tensor<8x1024x32xf32>, tensor<8x1024x1024xf32>) outs(%c : tensor<8x32x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x32x1024xf32>
  return %r : tensor<8x32x1024xf32>
}

// -----

/// Two m dims (a [batch, seq, hidden] activation times a weight): m is
/// collapsed to one dim around a linalg.matmul.
// CHECK-LABEL: func.func @activation_times_weight
// CHECK: func.func private @xla_contraction_0
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x256x256xf32>, %[[W:[a-z0-9]+]]: tensor<256x768xf32>, %[[INIT:[a-z0-9]+]]: tensor<4x256x768xf32>)
// CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<4x256x256xf32> into tensor<1024x256xf32>
// CHECK: %[[INIT2:.*]] = tensor.collapse_shape %[[INIT]]
// CHECK: %[[R:.*]] = linalg.matmul ins(%[[X2]], %[[W]] : {{.*}}) outs(%[[INIT2]] : tensor<1024x768xf32>)
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0, 1], [2]] output_shape [4, 256, 768]
// OUTLINE-LABEL: func.func @activation_times_weight
func.func @activation_times_weight(%x: tensor<4x256x256xf32>, %w: tensor<256x768xf32>) -> tensor<4x256x768xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x256x768xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x256x768xf32>) -> tensor<4x256x768xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x256x256xf32>, tensor<256x768xf32>) outs(%c : tensor<4x256x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x256x768xf32>
  return %r : tensor<4x256x768xf32>
}

// -----

/// Not a plain multiply-add (an exp fused in): left alone.
// CHECK-LABEL: func.func @not_a_contraction
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NOT: call
// OUTLINE-LABEL: func.func @not_a_contraction
// OUTLINE-NOT: call
func.func @not_a_contraction(%x: tensor<16x32xf32>, %w: tensor<32x8xf32>, %c: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<16x32xf32>, tensor<32x8xf32>) outs(%c : tensor<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %e = math.exp %a : f32
    %p = arith.mulf %e, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

/// A named matmul after a reshape: outline=true moves it out too, or
/// linalg-fuse-elementwise-ops would fuse the reshaped producer into it
/// (one 4-loop generic no schedule knows). Without outline it is left as is.
// CHECK-LABEL: func.func @reshaped_matmul
// CHECK: linalg.matmul
// OUTLINE-LABEL: func.func @reshaped_matmul
// OUTLINE: tensor.collapse_shape
// OUTLINE: call @[[HELPER:[a-z_0-9]+]](
// OUTLINE: func.func private @[[HELPER]](
// OUTLINE: linalg.matmul
func.func @reshaped_matmul(%x: tensor<4x32x64xf32>, %w: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %r = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x32x64xf32> into tensor<128x64xf32>
  %empty = tensor.empty() : tensor<128x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.matmul ins(%r, %w : tensor<128x64xf32>, tensor<64x128xf32>) outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %m : tensor<128x128xf32>
}

// -----

/// A matrix-vector product with both operands along k (one or two rows of x
/// against a [n, k] weight) stays the generic: each output is a row reduction
/// of two contiguous rows. With outline=true it moves into its helper as any
/// contraction does; three rows is a matmul again.
// CHECK-LABEL: func.func @few_rows
// CHECK: linalg.generic
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.matmul
// CHECK-LABEL: func.func @three_rows
// CHECK: linalg.matmul
// OUTLINE-LABEL: func.func @few_rows
// OUTLINE: call @
func.func @few_rows(%x: tensor<2x64xf32>, %w: tensor<100x64xf32>, %c: tensor<2x100xf32>) -> tensor<2x100xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x64xf32>, tensor<100x64xf32>) outs(%c : tensor<2x100xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x100xf32>
  return %r : tensor<2x100xf32>
}
func.func @three_rows(%x: tensor<3x64xf32>, %w: tensor<100x64xf32>, %c: tensor<3x100xf32>) -> tensor<3x100xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x64xf32>, tensor<100x64xf32>) outs(%c : tensor<3x100xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x100xf32>
  return %r : tensor<3x100xf32>
}

// -----

/// bf16 operands summed into f32 (each input extended in the body, as
/// xla-widen-contractions{keep-narrow} leaves a dot for cuBLASLt): a matmul of
/// bf16 operands into f32, B's transpose in bf16; the dot's precision mark stays.
// CHECK-LABEL: func.func @narrow_into_f32
// CHECK: linalg.transpose ins(%{{.*}} : tensor<21x47xbf16>) outs(%{{.*}} : tensor<47x21xbf16>)
// CHECK: linalg.matmul {xla.precision = "highest"} ins(%{{.*}}, %{{.*}} : tensor<33x47xbf16>, tensor<47x21xbf16>) outs(%{{.*}} : tensor<33x21xf32>)
// OUTLINE-LABEL: func.func @narrow_into_f32
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @narrow_into_f32(%a: tensor<33x47xbf16>, %b: tensor<21x47xbf16>, %c: tensor<33x21xf32>) -> tensor<33x21xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
       ins(%a, %b : tensor<33x47xbf16>, tensor<21x47xbf16>) outs(%c : tensor<33x21xf32>) attrs = {xla.precision = "highest"} {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<33x21xf32>
  return %0 : tensor<33x21xf32>
}
