// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-keep-roundings,canonicalize)' --split-input-file | FileCheck %s

/// A bf16 chain done in f32 keeps its rounding between the two adds: the
/// conversions lose their `contract` flag, so canonicalize cannot fold them.
// CHECK-LABEL: func.func @chain
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: %[[ROUNDED:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK: %[[BACK:.*]] = arith.extf %[[ROUNDED]] : bf16 to f32
// CHECK: arith.addf %[[BACK]]
func.func @chain(%a: bf16, %b: bf16, %c: bf16) -> bf16 {
  %0 = arith.extf %c fastmath<contract> : bf16 to f32
  %1 = arith.extf %b fastmath<contract> : bf16 to f32
  %2 = arith.extf %a fastmath<contract> : bf16 to f32
  %3 = arith.addf %2, %1 : f32
  %4 = arith.truncf %3 fastmath<contract> : f32 to bf16
  %5 = arith.extf %4 fastmath<contract> : bf16 to f32
  %6 = arith.addf %5, %0 : f32
  %7 = arith.truncf %6 fastmath<contract> : f32 to bf16
  return %7 : bf16
}

// -----

/// Other fastmath flags are not its business.
// CHECK-LABEL: func.func @others
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
func.func @others(%a: f32, %b: f32) -> f32 {
  %0 = arith.addf %a, %b fastmath<contract> : f32
  return %0 : f32
}
