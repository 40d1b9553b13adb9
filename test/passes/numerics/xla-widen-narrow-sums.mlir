// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-widen-narrow-sums)' --split-input-file | FileCheck %s

/// A bf16 sum reads an f32 copy of its operand and init, adds in f32 and
/// rounds once; the converts join the reduce's kernel.
// CHECK-LABEL: func.func @bf16_sum
// CHECK: %[[W:.*]] = stablehlo.convert %arg0 {xla.fusion_group = 3 : i64, xla.fusion_kind = "input"} : (tensor<8x1024xbf16>) -> tensor<8x1024xf32>
// CHECK: %[[Z:.*]] = stablehlo.convert %{{.*}} {xla.fusion_group = 3 : i64, xla.fusion_kind = "input"} : (tensor<bf16>) -> tensor<f32>
// CHECK: %[[S:.*]] = stablehlo.reduce(%[[W]] init: %[[Z]]) applies stablehlo.add across dimensions = [1] {xla.fusion_group = 3 : i64, xla.fusion_kind = "input"} : (tensor<8x1024xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK: %[[N:.*]] = stablehlo.convert %[[S]] {xla.fusion_group = 3 : i64, xla.fusion_kind = "input"} : (tensor<8xf32>) -> tensor<8xbf16>
// CHECK: return %[[N]]
func.func @bf16_sum(%x: tensor<8x1024xbf16>) -> tensor<8xbf16> {
  %z = stablehlo.constant dense<0.0> : tensor<bf16>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1]
      {xla.fusion_group = 3 : i64, xla.fusion_kind = "input"}
      : (tensor<8x1024xbf16>, tensor<bf16>) -> tensor<8xbf16>
  return %s : tensor<8xbf16>
}

// -----

/// f16 and f8 sums over several dims alike.
// CHECK-LABEL: func.func @f16_and_f8_sums
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.add across dimensions = [0, 2] : (tensor<4x8x16xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<8xf32>) -> tensor<8xf16>
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
func.func @f16_and_f8_sums(%x: tensor<4x8x16xf16>, %y: tensor<4x8xf8E4M3FN>) -> (tensor<8xf16>, tensor<4xf8E4M3FN>) {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 2]
      : (tensor<4x8x16xf16>, tensor<f16>) -> tensor<8xf16>
  %z8 = stablehlo.constant dense<0.0> : tensor<f8E4M3FN>
  %t = stablehlo.reduce(%y init: %z8) applies stablehlo.add across dimensions = [1]
      : (tensor<4x8xf8E4M3FN>, tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %s, %t : tensor<8xf16>, tensor<4xf8E4M3FN>
}

// -----

/// bf16 max and f16 min alike: exact in f32 (the result is one of the
/// elements), without a rounding per step.
// CHECK-LABEL: func.func @narrow_max_and_min
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.maximum across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<8xf32>) -> tensor<8xbf16>
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.minimum across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<16xf32>) -> tensor<16xf16>
func.func @narrow_max_and_min(%y: tensor<8x16xbf16>, %h: tensor<8x16xf16>) -> (tensor<8xbf16>, tensor<16xf16>) {
  %low = stablehlo.constant dense<0xFF80> : tensor<bf16>
  %high = stablehlo.constant dense<0x7C00> : tensor<f16>
  %b = stablehlo.reduce(%y init: %low) applies stablehlo.maximum across dimensions = [1]
      : (tensor<8x16xbf16>, tensor<bf16>) -> tensor<8xbf16>
  %m = stablehlo.reduce(%h init: %high) applies stablehlo.minimum across dimensions = [0]
      : (tensor<8x16xf16>, tensor<f16>) -> tensor<16xf16>
  return %b, %m : tensor<8xbf16>, tensor<16xf16>
}

// -----

/// Left as they are: f32 sums, a bf16 product (not exact in f32), a body
/// that is more than one op, a variadic reduce.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: stablehlo.convert
// CHECK: return
func.func @kept(%x: tensor<8x16xf32>, %y: tensor<8x16xbf16>, %i: tensor<8x16xi32>)
    -> (tensor<8xf32>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xi32>) {
  %zf = stablehlo.constant dense<0.0> : tensor<f32>
  %zb = stablehlo.constant dense<0.0> : tensor<bf16>
  %zi = stablehlo.constant dense<0> : tensor<i32>
  %a = stablehlo.reduce(%x init: %zf) applies stablehlo.add across dimensions = [1]
      : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  %c = stablehlo.reduce(%y init: %zb) applies stablehlo.multiply across dimensions = [1]
      : (tensor<8x16xbf16>, tensor<bf16>) -> tensor<8xbf16>
  %d = stablehlo.reduce(%y init: %zb) across dimensions = [1] : (tensor<8x16xbf16>, tensor<bf16>) -> tensor<8xbf16>
    reducer(%p: tensor<bf16>, %q: tensor<bf16>) {
      %m = stablehlo.multiply %q, %q : tensor<bf16>
      %s = stablehlo.add %p, %m : tensor<bf16>
      stablehlo.return %s : tensor<bf16>
    }
  %e:2 = stablehlo.reduce(%y init: %zb), (%i init: %zi) across dimensions = [1]
      : (tensor<8x16xbf16>, tensor<8x16xi32>, tensor<bf16>, tensor<i32>) -> (tensor<8xbf16>, tensor<8xi32>)
    reducer(%p: tensor<bf16>, %r: tensor<bf16>) (%pi: tensor<i32>, %ri: tensor<i32>) {
      %s = stablehlo.add %p, %r : tensor<bf16>
      %si = stablehlo.add %pi, %ri : tensor<i32>
      stablehlo.return %s, %si : tensor<bf16>, tensor<i32>
    }
  return %a, %c, %d, %e#0, %e#1 : tensor<8xf32>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xi32>
}
