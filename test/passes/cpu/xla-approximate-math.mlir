// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-approximate-math)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-approximate-math,inline)' --split-input-file | FileCheck %s --check-prefix=INLINED

/// f32 exp and tanh on vectors call polynomial helpers, one per type.
// CHECK-LABEL: func.func @vector_exp_tanh
// CHECK-SAME: (%[[X:.*]]: vector<16xf32>)
// CHECK: %[[E:.*]] = call @xla_exp_v16f32(%[[X]]) : (vector<16xf32>) -> vector<16xf32>
// CHECK: %[[T:.*]] = call @xla_tanh_v16f32(%[[E]])
// CHECK: return %[[T]]
/// exp: below -104 the result is +0 as a product with an exact zero (the
/// second half of 2^k made +0.0 there): the product that underflowed to zero
/// took a microcode assist per vector on Intel.
// CHECK-LABEL: func.func private @xla_exp_v16f32
// CHECK: arith.constant dense<-1.040000e+02>
// CHECK: math.roundeven
// CHECK: math.fma
// CHECK-NOT: math.exp
// CHECK: %[[UNDER:.*]] = arith.cmpf olt, %arg0, %{{.*}} : vector<16xf32>
// CHECK: %[[SECOND:.*]] = arith.select %[[UNDER]], %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[SECOND]]
// CHECK: arith.cmpf uno
/// tanh: no exp. |x| clamped to 9.1 by a compare and select that keeps NaN;
/// sigma = 2 tanh(|x|/2) as one rational function (a divide); the double-angle
/// step's one divide, its numerator chosen per lane (below 1.1: sigma, above:
/// (2 - sigma)^2); the sign copied back.
// CHECK-LABEL: func.func private @xla_tanh_v16f32
// CHECK-NOT: math.roundeven
// CHECK: %[[ABS:.*]] = math.absf %arg0
// CHECK: %[[BELOW:.*]] = arith.cmpf ult, %[[ABS]]
// CHECK: %[[C:.*]] = arith.select %[[BELOW]], %[[ABS]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: %[[RATIO:.*]] = arith.divf
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[C]]
// CHECK: %[[NUM:.*]] = arith.select %[[SMALL]]
// CHECK: %[[Z:.*]] = arith.divf %[[NUM]]
// CHECK: %[[MAGNITUDE:.*]] = arith.select %[[SMALL]]
// CHECK-NOT: arith.divf
// CHECK: math.copysign %[[MAGNITUDE]], %arg0
/// Inlined, no libm call is left.
// INLINED-LABEL: func.func @vector_exp_tanh
// INLINED-NOT: math.exp
// INLINED-NOT: math.tanh
// INLINED: math.fma {{.*}} : vector<16xf32>
func.func @vector_exp_tanh(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.exp %x : vector<16xf32>
  %1 = math.tanh %0 : vector<16xf32>
  return %1 : vector<16xf32>
}

// -----

/// Scalar f32 too; f64 keeps libm's exp (its own precision is needed).
// CHECK-LABEL: func.func @scalars
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f64)
// CHECK: call @xla_exp_f32(%[[A]]) : (f32) -> f32
// CHECK: math.exp %[[B]] : f64
// INLINED-LABEL: func.func @scalars
func.func @scalars(%a: f32, %b: f64) -> (f32, f64) {
  %0 = math.exp %a : f32
  %1 = math.exp %b : f64
  return %0, %1 : f32, f64
}

// -----

/// f32 log and log1p: the exponent and mantissa split in integer code, a
/// polynomial in the mantissa, libm's special values by selects; log1p is
/// log(1 + x) plus the correction of 1 + x's rounding.
// CHECK-LABEL: func.func @logs
// CHECK: call @xla_log_v16f32
// CHECK: call @xla_log1p_v16f32
// CHECK-LABEL: func.func private @xla_log_v16f32
// CHECK: arith.shrsi {{.*}} : vector<16xi32>
// CHECK: math.fma
// CHECK: arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-NOT: math.log
// CHECK-LABEL: func.func private @xla_log1p_v16f32
// CHECK: arith.divf
// INLINED-LABEL: func.func @logs
// INLINED-NOT: math.log
func.func @logs(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %0 = math.log %x : vector<16xf32>
  %1 = math.log1p %x : vector<16xf32>
  return %0, %1 : vector<16xf32>, vector<16xf32>
}

// -----

/// expm1 is exp's reduced polynomial without its 1, scaled by 2^k and plus
/// 2^k - 1 (no libm call per lane); -0 and NaN are kept by a select.
// CHECK-LABEL: func.func @vector_expm1
// CHECK: call @xla_expm1_v8f32
// CHECK-LABEL: func.func private @xla_expm1_v8f32
// CHECK: math.roundeven
// CHECK: arith.bitcast {{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: math.fma
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf oeq
// CHECK-NOT: math.expm1
// INLINED-LABEL: func.func @vector_expm1
// INLINED-NOT: math.expm1
func.func @vector_expm1(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.expm1 %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

/// bf16 and f16 math goes through the f32 polynomials (extf, polynomial,
/// truncf): math-extend-to-supported-types, later, made a libm call per lane.
// CHECK-LABEL: func.func @halves
// CHECK: call @xla_tanh_v16bf16
// CHECK: call @xla_exp_v16f16
// CHECK-LABEL: func.func private @xla_tanh_v16bf16
// CHECK: arith.extf %arg0 : vector<16xbf16> to vector<16xf32>
// CHECK: math.copysign {{.*}} : vector<16xf32>
// CHECK: arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK-LABEL: func.func private @xla_exp_v16f16
// CHECK: arith.extf %arg0 : vector<16xf16> to vector<16xf32>
// CHECK: arith.truncf {{.*}} : vector<16xf32> to vector<16xf16>
// INLINED-LABEL: func.func @halves
// INLINED-NOT: math.tanh
// INLINED-NOT: math.exp
func.func @halves(%x: vector<16xbf16>, %y: vector<16xf16>) -> (vector<16xbf16>, vector<16xf16>) {
  %0 = math.tanh %x : vector<16xbf16>
  %1 = math.exp %y : vector<16xf16>
  return %0, %1 : vector<16xbf16>, vector<16xf16>
}

// -----

/// f32 sin and cos: x reduced by pi/2 in three f32 parts (k = roundeven(x * 2/pi)),
/// cephes' polynomials, the quadrant's pick and sign; libm only in a branch
/// taken when some lane is beyond 8192, inf or NaN.
// CHECK-LABEL: func.func @vector_sin_cos
// CHECK: %[[S:.*]] = call @xla_sin_v16f32(%arg0)
// CHECK: call @xla_cos_v16f32(%[[S]])
// CHECK-LABEL: func.func private @xla_sin_v16f32
// CHECK: math.roundeven
// CHECK: %[[NK:.*]] = arith.negf
// CHECK: math.fma %[[NK]], %{{.*}}, %arg0
// CHECK: math.fma %[[NK]]
// CHECK: math.fma %[[NK]]
// CHECK: arith.fptosi
// CHECK: %[[BIG:.*]] = arith.cmpf ugt
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[BIG]] : vector<16xi1> into i1
// CHECK: scf.if %[[ANY]] -> (vector<16xf32>)
// CHECK-NEXT: math.sin %arg0 : vector<16xf32>
// CHECK-LABEL: func.func private @xla_cos_v16f32
// CHECK: arith.addi
// CHECK: math.cos %arg0 : vector<16xf32>
// INLINED-LABEL: func.func @vector_sin_cos
// INLINED-COUNT-6: math.fma
func.func @vector_sin_cos(%x: vector<16xf32>) -> vector<16xf32> {
  %s = math.sin %x : vector<16xf32>
  %c = math.cos %s : vector<16xf32>
  return %c : vector<16xf32>
}
