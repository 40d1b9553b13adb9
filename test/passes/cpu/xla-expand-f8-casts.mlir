// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-expand-f8-casts)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-expand-f8-casts{f16=true})' --split-input-file | FileCheck %s --check-prefix=F16

/// f32 -> f8 rounds on the bits: add half an f8 ulp (less one, plus the kept
/// bit: ties to even), shift, rebias; values below the smallest normal are
/// scaled and rounded by adding 2^23; past the largest finite: NaN (FN has no inf).
// CHECK-LABEL: func.func private @xla_truncf_f32_f8E4M3FN(
// CHECK-SAME: %[[X:.*]]: f32) -> f8E4M3FN
// CHECK: arith.bitcast %[[X]] : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.cmpi ugt
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK-LABEL: func.func @truncate
// CHECK: %[[Y:.*]] = call @xla_truncf_f32_f8E4M3FN(%arg0) : (f32) -> f8E4M3FN
// CHECK-NOT: arith.truncf
func.func @truncate(%x: f32) -> f8E4M3FN {
  %y = arith.truncf %x : f32 to f8E4M3FN
  return %y : f8E4M3FN
}

// -----

/// f8 -> f32 on vectors: the helper works lane-wise on vector<8xi32>.
// CHECK-LABEL: func.func private @xla_extf_v8xf8E5M2_v8xf32(
// CHECK: arith.extui %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: arith.uitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: arith.select
// CHECK-LABEL: func.func @extend
// CHECK: call @xla_extf_v8xf8E5M2_v8xf32(%arg0)
func.func @extend(%x: vector<8xf8E5M2>) -> vector<8xf32> {
  %y = arith.extf %x : vector<8xf8E5M2> to vector<8xf32>
  return %y : vector<8xf32>
}

// -----

/// Casts between other types are left alone.
// CHECK-LABEL: func.func @other
// CHECK-NEXT: arith.truncf %arg0 : f32 to bf16
func.func @other(%x: f32) -> bf16 {
  %y = arith.truncf %x : f32 to bf16
  return %y : bf16
}

// -----

/// f16 is expanded only with f16=true (a CPU without F16C): 16-bit storage,
/// the sign at bit 15, 0x7C00 infinity.
// CHECK-LABEL: func.func @half
// CHECK-NEXT: arith.truncf %arg0 : f32 to f16
// F16-LABEL: func.func private @xla_truncf_f32_f16(
// F16: arith.constant 16 : i32
// F16: arith.constant 31744 : i32
// F16: arith.trunci %{{.*}} : i32 to i16
// F16: arith.bitcast %{{.*}} : i16 to f16
// F16-LABEL: func.func @half
// F16-NEXT: call @xla_truncf_f32_f16(%arg0)
func.func @half(%x: f32) -> f16 {
  %y = arith.truncf %x : f32 to f16
  return %y : f16
}
