// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-amx-contractions{min-work=1})' --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

/// f32 matmul of widened bf16 arguments from zeros: the bf16 arguments
/// themselves, C an empty tensor, the matmul marked; the widenings and the
/// fill are gone.
// CHECK-LABEL: func.func @widened
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK: %[[C:.*]] = tensor.empty() : tensor<64x96xf32>
// CHECK: linalg.matmul {xla.amx, xla.amx_zeros} ins(%arg0, %arg1 : tensor<64x128xbf16>, tensor<128x96xbf16>) outs(%[[C]] : tensor<64x96xf32>)
func.func @widened(%a: tensor<64x128xbf16>, %b: tensor<128x96xbf16>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<64x128xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x128xbf16>) outs(%ea : tensor<64x128xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<64x128xf32>
  %eb = tensor.empty() : tensor<128x96xf32>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<128x96xbf16>) outs(%eb : tensor<128x96xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<128x96xf32>
  %ec = tensor.empty() : tensor<64x96xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<64x96xf32>) -> tensor<64x96xf32>
  %p = linalg.matmul ins(%wa, %wb : tensor<64x128xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %p : tensor<64x96xf32>
}

// -----

/// An f32 operand that is no widening: today's matmul.
// CHECK-LABEL: func.func @f32_operand
// CHECK-NOT: xla.amx
func.func @f32_operand(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>, %c: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %p = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %p : tensor<64x96xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#at = affine_map<(d0, d1, d2) -> (d2, d0)>
#bm = affine_map<(d0, d1, d2) -> (d2, d1)>
#cm = affine_map<(d0, d1, d2) -> (d0, d1)>

/// A matmul with indexing maps of its own (A transposed): left as it is.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: xla.amx
func.func @transposed(%a: tensor<128x64xbf16>, %b: tensor<128x96xbf16>, %c: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %ea = tensor.empty() : tensor<128x64xf32>
  %wa = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<128x64xbf16>) outs(%ea : tensor<128x64xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<128x64xf32>
  %eb = tensor.empty() : tensor<128x96xf32>
  %wb = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<128x96xbf16>) outs(%eb : tensor<128x96xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<128x96xf32>
  %p = linalg.matmul indexing_maps = [#at, #bm, #cm] ins(%wa, %wb : tensor<128x64xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %p : tensor<64x96xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// The one elementwise consumer of the marked matmul (a ReLU rounded to
/// bf16: identity maps, scalar arith ops and constants) is marked for
/// xla-amx-calls to run in the matmul's chunks; the schedules leave it.
// CHECK-LABEL: func.func @epilogue
// CHECK: linalg.matmul {xla.amx, xla.amx_zeros}
// CHECK: linalg.generic
// CHECK-SAME: attrs = {xla.amx_epilogue}
func.func @epilogue(%a: tensor<64x128xbf16>, %b: tensor<128x96xbf16>) -> tensor<64x96xbf16> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<64x128xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x128xbf16>) outs(%ea : tensor<64x128xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<64x128xf32>
  %eb = tensor.empty() : tensor<128x96xf32>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<128x96xbf16>) outs(%eb : tensor<128x96xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<128x96xf32>
  %ec = tensor.empty() : tensor<64x96xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<64x96xf32>) -> tensor<64x96xf32>
  %p = linalg.matmul ins(%wa, %wb : tensor<64x128xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  %eo = tensor.empty() : tensor<64x96xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<64x96xf32>) outs(%eo : tensor<64x96xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %m = arith.maximumf %x, %zero : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x96xbf16>
  return %r : tensor<64x96xbf16>
}

// -----

#id3 = affine_map<(d0, d1) -> (d0, d1)>

/// f32 matmul of widened i8 (signed) and ui8 (unsigned) with sums exact in
/// f32 (k 256: 256 x 255 x 128 < 2^24): the widenings made again into bf16
/// (8-bit integers are bf16s exactly), the matmul marked.
// CHECK-LABEL: func.func @widened_integers
// CHECK: arith.sitofp %{{.*}} : i8 to bf16
// CHECK: arith.uitofp %{{.*}} : i8 to bf16
// CHECK: linalg.matmul {xla.amx, xla.amx_zeros} ins({{.*}} : tensor<64x256xbf16>, tensor<256x96xbf16>)
func.func @widened_integers(%a: tensor<64x256xi8>, %b: tensor<256x96xi8>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<64x256xf32>
  %wa = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x256xi8>) outs(%ea : tensor<64x256xf32>) {
  ^bb0(%x: i8, %o: f32):
    %w = arith.sitofp %x : i8 to f32
    linalg.yield %w : f32
  } -> tensor<64x256xf32>
  %eb = tensor.empty() : tensor<256x96xf32>
  %wb = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<256x96xi8>) outs(%eb : tensor<256x96xf32>) {
  ^bb0(%x: i8, %o: f32):
    %w = arith.uitofp %x : i8 to f32
    linalg.yield %w : f32
  } -> tensor<256x96xf32>
  %ec = tensor.empty() : tensor<64x96xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<64x96xf32>) -> tensor<64x96xf32>
  %p = linalg.matmul ins(%wa, %wb : tensor<64x256xf32>, tensor<256x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %p : tensor<64x96xf32>
}

// -----

#id4 = affine_map<(d0, d1) -> (d0, d1)>

/// Widened ui8 x ui8 with k 512: 512 x 255 x 255 > 2^24, the f32 sums round
/// (a program's own f32 matmul of converted bytes), so the kernel's order of
/// summing would change the roundings: left as it is.
// CHECK-LABEL: func.func @integers_past_f32
// CHECK-NOT: xla.amx
func.func @integers_past_f32(%a: tensor<64x512xi8>, %b: tensor<512x96xi8>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<64x512xf32>
  %wa = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x512xi8>) outs(%ea : tensor<64x512xf32>) {
  ^bb0(%x: i8, %o: f32):
    %w = arith.uitofp %x : i8 to f32
    linalg.yield %w : f32
  } -> tensor<64x512xf32>
  %eb = tensor.empty() : tensor<512x96xf32>
  %wb = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<512x96xi8>) outs(%eb : tensor<512x96xf32>) {
  ^bb0(%x: i8, %o: f32):
    %w = arith.uitofp %x : i8 to f32
    linalg.yield %w : f32
  } -> tensor<512x96xf32>
  %ec = tensor.empty() : tensor<64x96xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<64x96xf32>) -> tensor<64x96xf32>
  %p = linalg.matmul ins(%wa, %wb : tensor<64x512xf32>, tensor<512x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %p : tensor<64x96xf32>
}
