// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-decompose-batch-norm)' --split-input-file --verify-diagnostics | FileCheck %s

/// Inference normalizes with the given statistics: every per-feature vector
/// is broadcast along feature_index, then (x - mean) / sqrt(var + eps) * scale + offset.
// CHECK-LABEL: func.func private @xla_batch_norm_inference_0(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<3xf32>, %[[O:.*]]: tensor<3xf32>, %[[M:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>
// CHECK: %[[EPS:.*]] = stablehlo.constant dense<1.000000e-03> : tensor<2x3xf32>
// CHECK: %[[SX:.*]] = stablehlo.broadcast_in_dim %[[S]], dims = [1]
// CHECK: %[[OX:.*]] = stablehlo.broadcast_in_dim %[[O]], dims = [1]
// CHECK: %[[MX:.*]] = stablehlo.broadcast_in_dim %[[M]], dims = [1]
// CHECK: %[[VX:.*]] = stablehlo.broadcast_in_dim %[[V]], dims = [1]
// CHECK: %[[CENTERED:.*]] = stablehlo.subtract %[[X]], %[[MX]]
// CHECK: %[[VAR_EPS:.*]] = stablehlo.add %[[VX]], %[[EPS]]
// CHECK: %[[STDDEV:.*]] = stablehlo.sqrt %[[VAR_EPS]]
// CHECK: %[[NORM:.*]] = stablehlo.divide %[[CENTERED]], %[[STDDEV]]
// CHECK: %[[SCALED:.*]] = stablehlo.multiply %[[SX]], %[[NORM]]
// CHECK: %[[OUT:.*]] = stablehlo.add %[[SCALED]], %[[OX]]
// CHECK: return %[[OUT]]
// CHECK-LABEL: func.func @inference
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<3xf32>, %[[O:.*]]: tensor<3xf32>, %[[M:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>)
// CHECK: %[[R:.*]] = call @xla_batch_norm_inference_0(%[[X]], %[[S]], %[[O]], %[[M]], %[[V]])
// CHECK-NOT: stablehlo.batch_norm_inference
// CHECK: return %[[R]]
func.func @inference(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

/// Training computes the batch mean and variance by reducing every dimension
/// but the feature one, dividing by the elements per feature (2 * 5 = 10).
// CHECK-LABEL: func.func private @xla_batch_norm_training_0(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x5xbf16>
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
// CHECK: %[[COUNT:.*]] = stablehlo.constant dense<1.000000e+01> : tensor<4xbf16>
// CHECK: %[[SUM:.*]] = stablehlo.reduce(%[[X]] init: %[[ZERO]]) applies stablehlo.add across dimensions = [0, 2]
// CHECK: %[[MEAN:.*]] = stablehlo.divide %[[SUM]], %[[COUNT]] : tensor<4xbf16>
// CHECK: %[[MX:.*]] = stablehlo.broadcast_in_dim %[[MEAN]], dims = [1]
// CHECK: %[[C:.*]] = stablehlo.subtract %[[X]], %[[MX]]
// CHECK: %[[SQ:.*]] = stablehlo.multiply %[[C]], %[[C]]
// CHECK: %[[SQSUM:.*]] = stablehlo.reduce(%[[SQ]] init: %[[ZERO]])
// CHECK: %[[VAR:.*]] = stablehlo.divide %[[SQSUM]], %[[COUNT]]
// CHECK: return %{{.*}}, %[[MEAN]], %[[VAR]]
// CHECK-LABEL: func.func @training
// CHECK: call @xla_batch_norm_training_0
func.func @training(%x: tensor<2x4x5xbf16>, %s: tensor<4xbf16>, %o: tensor<4xbf16>) -> (tensor<2x4x5xbf16>, tensor<4xbf16>, tensor<4xbf16>) {
  %y, %mean, %var = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-5 : f32, feature_index = 1 : i64}
    : (tensor<2x4x5xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> (tensor<2x4x5xbf16>, tensor<4xbf16>, tensor<4xbf16>)
  return %y, %mean, %var : tensor<2x4x5xbf16>, tensor<4xbf16>, tensor<4xbf16>
}

// -----

/// The gradient: grad_offset = sum(dy), grad_scale = sum(dy * normalized),
/// both reduced over the non-feature dimensions (feature_index 0 here).
// CHECK-LABEL: func.func private @xla_batch_norm_grad_0(
// CHECK-SAME: %[[X:.*]]: tensor<3x2xf64>, %{{.*}}: tensor<3xf64>, %{{.*}}: tensor<3xf64>, %{{.*}}: tensor<3xf64>, %[[DY:.*]]: tensor<3x2xf64>
// CHECK: %[[STDDEV:.*]] = stablehlo.sqrt
// CHECK: %[[NORM:.*]] = stablehlo.divide %{{.*}}, %[[STDDEV]]
// CHECK: %[[GOFF:.*]] = stablehlo.reduce(%[[DY]] init: %{{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK: %[[SCALE_STD:.*]] = stablehlo.divide %{{.*}}, %[[STDDEV]]
// CHECK: %[[SCALE_N:.*]] = stablehlo.divide %[[SCALE_STD]], %{{.*}}
// CHECK: %[[GX:.*]] = stablehlo.multiply %[[SCALE_N]], %{{.*}}
// CHECK: %[[DYN:.*]] = stablehlo.multiply %[[DY]], %[[NORM]]
// CHECK: %[[GSCALE:.*]] = stablehlo.reduce(%[[DYN]] init: %{{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK: return %[[GX]], %[[GSCALE]], %[[GOFF]]
// CHECK-LABEL: func.func @grad
// CHECK: %[[G:.*]]:3 = call @xla_batch_norm_grad_0
// CHECK: return %[[G]]#0, %[[G]]#1, %[[G]]#2
func.func @grad(%x: tensor<3x2xf64>, %s: tensor<3xf64>, %m: tensor<3xf64>, %v: tensor<3xf64>, %dy: tensor<3x2xf64>) -> (tensor<3x2xf64>, tensor<3xf64>, tensor<3xf64>) {
  %gx, %gs, %go = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %dy) {epsilon = 1.0e-3 : f32, feature_index = 0 : i64}
    : (tensor<3x2xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3x2xf64>) -> (tensor<3x2xf64>, tensor<3xf64>, tensor<3xf64>)
  return %gx, %gs, %go : tensor<3x2xf64>, tensor<3xf64>, tensor<3xf64>
}

// -----

/// Dynamic shapes are refused with a hint: the decomposition needs static sizes.
func.func @dynamic(%x: tensor<?x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{stablehlo.batch_norm_inference with dynamic shapes is not supported; run stablehlo-refine-shapes first}}
  %r = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}
