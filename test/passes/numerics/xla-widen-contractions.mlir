// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-widen-contractions)' --split-input-file | FileCheck %s

/// A bf16 dot reads f32 copies of its operands, accumulates in f32 and rounds once.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xbf16>, %[[B:.*]]: tensor<8x2xbf16>)
// CHECK: %[[A32:.*]] = stablehlo.convert %[[A]] : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[B32:.*]] = stablehlo.convert %[[B]] : (tensor<8x2xbf16>) -> tensor<8x2xf32>
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[A32]], %[[B32]], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK: %[[R:.*]] = stablehlo.convert %[[D]] : (tensor<4x2xf32>) -> tensor<4x2xbf16>
// CHECK: return %[[R]]
func.func @dot(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
  return %0 : tensor<4x2xbf16>
}

// -----

/// An f16 convolution keeps its window and dimension numbers.
// CHECK-LABEL: func.func @conv
// CHECK: stablehlo.convolution({{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]}
// CHECK-SAME: (tensor<1x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x3x3x4xf32>
// CHECK: stablehlo.convert {{.*}} : (tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf16>
func.func @conv(%x: tensor<1x8x8x4xf16>, %w: tensor<3x3x4x4xf16>) -> tensor<1x3x3x4xf16> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x8x8x4xf16>, tensor<3x3x4x4xf16>) -> tensor<1x3x3x4xf16>
  return %0 : tensor<1x3x3x4xf16>
}

// -----

/// bf16 operands with an f32 result (preferred_element_type=f32, what
/// mixed-precision training emits): the operands widened, no convert back.
// CHECK-LABEL: func.func @bf16_to_f32
// CHECK: %[[A32:.*]] = stablehlo.convert %{{.*}} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[B32:.*]] = stablehlo.convert %{{.*}} : (tensor<8x2xbf16>) -> tensor<8x2xf32>
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[A32]], %[[B32]]
// CHECK-NEXT: return %[[D]]
func.func @bf16_to_f32(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

/// Mixed operands: only the narrow one is converted.
// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x2xbf16>)
// CHECK: %[[B32:.*]] = stablehlo.convert %[[B]] : (tensor<8x2xbf16>) -> tensor<8x2xf32>
// CHECK: stablehlo.dot_general %[[A]], %[[B32]]
func.func @mixed(%a: tensor<4x8xf32>, %b: tensor<8x2xbf16>) -> tensor<4x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xbf16>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

/// f8 operands and a bf16 result: f32 inside, one rounding to bf16.
// CHECK-LABEL: func.func @f8
// CHECK: stablehlo.convert %{{.*}} : (tensor<4x8xf8E5M2>) -> tensor<4x8xf32>
// CHECK: stablehlo.dot_general {{.*}} -> tensor<4x2xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<4x2xf32>) -> tensor<4x2xbf16>
func.func @f8(%a: tensor<4x8xf8E5M2>, %b: tensor<8x2xf8E5M2>) -> tensor<4x2xbf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf8E5M2>, tensor<8x2xf8E5M2>) -> tensor<4x2xbf16>
  return %0 : tensor<4x2xbf16>
}

// -----

/// Unsigned and signed i8 to i32 (quantized inference) with a short k: every
/// product and partial sum is an integer of at most 24 bits (8 x 255 x 128),
/// which f32 holds exactly, so the sums are f32 FMAs (a quarter faster than
/// i32 multiplies on AVX2); the exact sum converted to i32.
// CHECK-LABEL: func.func @u8_s8
// CHECK: stablehlo.convert %{{.*}} : (tensor<4x8xui8>) -> tensor<4x8xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<8x2xi8>) -> tensor<8x2xf32>
// CHECK: stablehlo.dot_general {{.*}} -> tensor<4x2xf32>
// CHECK: %[[R:.*]] = stablehlo.convert %{{.*}} : (tensor<4x2xf32>) -> tensor<4x2xi32>
// CHECK-NEXT: return %[[R]]
func.func @u8_s8(%a: tensor<4x8xui8>, %b: tensor<8x2xi8>) -> tensor<4x2xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xui8>, tensor<8x2xi8>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

/// A k too long for one exact f32 sum (512 x 255 x 255 > 2^24): k in chunks
/// of 256 (each sum under 2^24, exact in f32), each chunk's f32 dot converted
/// to i32 and the chunks added in i32 (wrapping as one i32 sum would).
// CHECK-LABEL: func.func @u8_long
// CHECK: %[[A0:.*]] = stablehlo.slice %{{.*}} [0:4, 0:256]
// CHECK: %[[B0:.*]] = stablehlo.slice %{{.*}} [0:256, 0:2]
// CHECK: stablehlo.convert %[[A0]] : (tensor<4x256xui8>) -> tensor<4x256xf32>
// CHECK: %[[D0:.*]] = stablehlo.dot_general {{.*}} -> tensor<4x2xf32>
// CHECK: %[[I0:.*]] = stablehlo.convert %[[D0]] : (tensor<4x2xf32>) -> tensor<4x2xi32>
// CHECK: stablehlo.slice %{{.*}} [0:4, 256:512]
// CHECK: %[[D1:.*]] = stablehlo.dot_general {{.*}} -> tensor<4x2xf32>
// CHECK: %[[I1:.*]] = stablehlo.convert %[[D1]] : (tensor<4x2xf32>) -> tensor<4x2xi32>
// CHECK: %[[S:.*]] = stablehlo.add %[[I0]], %[[I1]] : tensor<4x2xi32>
// CHECK-NEXT: return %[[S]]
func.func @u8_long(%a: tensor<4x512xui8>, %b: tensor<512x2xui8>) -> tensor<4x2xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x512xui8>, tensor<512x2xui8>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

/// i16 operands: a chunk would be shorter than 128 (2^24 / 2^30 < 1), so the
/// dot is widened to i32 and summed there.
// CHECK-LABEL: func.func @i16_long
// CHECK: stablehlo.convert %{{.*}} : (tensor<4x512xi16>) -> tensor<4x512xi32>
// CHECK: %[[D:.*]] = stablehlo.dot_general {{.*}} -> tensor<4x2xi32>
// CHECK-NEXT: return %[[D]]
func.func @i16_long(%a: tensor<4x512xi16>, %b: tensor<512x2xi16>) -> tensor<4x2xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x512xi16>, tensor<512x2xi16>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

/// An i32 dot of i8 and ui8 extended to i32 (`a.astype(jnp.int32) @
/// b.astype(jnp.int32)`) is the 8-bit dot: summed exactly in f32.
// CHECK-LABEL: func.func @extended_i8
// CHECK-NOT: tensor<4x8xi32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<4x8xui8>) -> tensor<4x8xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<8x2xi8>) -> tensor<8x2xf32>
// CHECK: stablehlo.dot_general {{.*}} -> tensor<4x2xf32>
func.func @extended_i8(%a: tensor<4x8xui8>, %b: tensor<8x2xi8>) -> tensor<4x2xi32> {
  %a32 = stablehlo.convert %a : (tensor<4x8xui8>) -> tensor<4x8xi32>
  %b32 = stablehlo.convert %b : (tensor<8x2xi8>) -> tensor<8x2xi32>
  %0 = stablehlo.dot_general %a32, %b32, contracting_dims = [1] x [0] : (tensor<4x8xi32>, tensor<8x2xi32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

/// An i32 operand that is no extension keeps the i32 dot as it is.
// CHECK-LABEL: func.func @extended_and_wide
// CHECK: stablehlo.dot_general {{.*}} : (tensor<4x8xi32>, tensor<8x2xi32>) -> tensor<4x2xi32>
func.func @extended_and_wide(%a: tensor<4x8xi8>, %b: tensor<8x2xi32>) -> tensor<4x2xi32> {
  %a32 = stablehlo.convert %a : (tensor<4x8xi8>) -> tensor<4x8xi32>
  %0 = stablehlo.dot_general %a32, %b, contracting_dims = [1] x [0] : (tensor<4x8xi32>, tensor<8x2xi32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

/// i8 to i8 wraps: the exact sum goes to i32 and is truncated from there
/// (f32 -> i8 would saturate), the same bits as an i8 accumulator's.
// CHECK-LABEL: func.func @i8_wraps
// CHECK: stablehlo.convolution({{.*}}) {{.*}} -> tensor<1x6x6x4xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xi32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<1x6x6x4xi32>) -> tensor<1x6x6x4xi8>
func.func @i8_wraps(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x4xi8>) -> tensor<1x6x6x4xi8> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x8x8x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x6x6x4xi8>
  return %0 : tensor<1x6x6x4xi8>
}

// -----

/// Types that are their own accumulator are left alone: f32, f64, i32, i64,
/// and ui32 (its sums wrap as i32's do).
// CHECK-LABEL: func.func @wide
// CHECK-NOT: stablehlo.convert
func.func @wide(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x8xf64>, %d: tensor<8x2xf64>,
                %e: tensor<4x8xui32>, %f: tensor<8x2xui32>, %g: tensor<4x8xi64>, %h: tensor<8x2xi64>)
    -> (tensor<4x2xf32>, tensor<4x2xf64>, tensor<4x2xui32>, tensor<4x2xi64>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<4x8xf64>, tensor<8x2xf64>) -> tensor<4x2xf64>
  %2 = stablehlo.dot_general %e, %f, contracting_dims = [1] x [0] : (tensor<4x8xui32>, tensor<8x2xui32>) -> tensor<4x2xui32>
  %3 = stablehlo.dot_general %g, %h, contracting_dims = [1] x [0] : (tensor<4x8xi64>, tensor<8x2xi64>) -> tensor<4x2xi64>
  return %0, %1, %2, %3 : tensor<4x2xf32>, tensor<4x2xf64>, tensor<4x2xui32>, tensor<4x2xi64>
}

// -----

/// One extension read twice (a gram matrix a^T a of i8): erased once.
// CHECK-LABEL: func.func @extended_twice
// CHECK-NOT: tensor<4x8xi32>
// CHECK: stablehlo.dot_general {{.*}} -> tensor<8x8xf32>
func.func @extended_twice(%a: tensor<4x8xi8>) -> tensor<8x8xi32> {
  %a32 = stablehlo.convert %a : (tensor<4x8xi8>) -> tensor<4x8xi32>
  %0 = stablehlo.dot_general %a32, %a32, contracting_dims = [0] x [0] : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<8x8xi32>
  return %0 : tensor<8x8xi32>
}
