// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-expm1-to-libm)' --split-input-file | FileCheck %s

/// f32 expm1 calls libm's expm1f through one helper shared by every use.
// CHECK-LABEL: func.func private @xla_expm1_f32(
// CHECK-SAME: %[[X:.*]]: f32) -> f32
// CHECK: %[[Y:.*]] = call @expm1f(%[[X]]) : (f32) -> f32
// CHECK: return %[[Y]]
// CHECK: func.func private @expm1f(f32) -> f32
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[A:.*]]: f32)
// CHECK: %[[E:.*]] = call @xla_expm1_f32(%[[A]])
// CHECK: %[[F:.*]] = call @xla_expm1_f32(%[[E]])
// CHECK-NOT: math.expm1
// CHECK: return %[[F]]
func.func @scalar(%a: f32) -> f32 {
  %e = math.expm1 %a : f32
  %f = math.expm1 %e : f32
  return %f : f32
}

// -----

/// bf16 is widened to f32 around expm1f, with integer ops (no __truncsfbf2).
// CHECK-LABEL: func.func private @xla_expm1_bf16(
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : bf16 to i16
// CHECK: %[[WIDE:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[Y:.*]] = call @expm1f(%[[WIDE]])
// CHECK: arith.trunci
// CHECK: %[[R:.*]] = arith.bitcast %{{.*}} : i16 to bf16
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @bfloat
// CHECK: call @xla_expm1_bf16
func.func @bfloat(%a: bf16) -> bf16 {
  %e = math.expm1 %a : bf16
  return %e : bf16
}

// -----

/// A vector calls libm's expm1 once per lane.
// CHECK-LABEL: func.func private @xla_expm1_v2xf64(
// CHECK-SAME: %[[V:.*]]: vector<2xf64>) -> vector<2xf64>
// CHECK: %[[L0:.*]] = vector.extract %[[V]][0]
// CHECK: %[[Y0:.*]] = call @expm1(%[[L0]]) : (f64) -> f64
// CHECK: %[[W0:.*]] = vector.insert %[[Y0]], %{{.*}} [0]
// CHECK: %[[L1:.*]] = vector.extract %[[V]][1]
// CHECK: %[[Y1:.*]] = call @expm1(%[[L1]])
// CHECK: %[[W1:.*]] = vector.insert %[[Y1]], %[[W0]] [1]
// CHECK: return %[[W1]]
// CHECK-LABEL: func.func @vector
// CHECK: call @xla_expm1_v2xf64
func.func @vector(%a: vector<2xf64>) -> vector<2xf64> {
  %e = math.expm1 %a : vector<2xf64>
  return %e : vector<2xf64>
}
