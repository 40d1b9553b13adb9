// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-sort)' --split-input-file --verify-diagnostics | FileCheck %s

/// A 1-D sort becomes a call to a helper that views the operand as one row,
/// copies it into a two-row scratch buffer and merge-sorts the values between
/// the rows without a branch (both heads read, a select moves one); the
/// comparator region becomes a private function on 0-d tensors.
// CHECK-LABEL: func.func private @xla_sort_0(
// CHECK-SAME: %[[IN:.*]]: tensor<5xf32>
// CHECK: %[[ROW:.*]] = stablehlo.reshape %[[IN]] : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK: %[[SORTED:.*]] = call @xla_sort_0_rows(%[[ROW]])
// CHECK: %[[OUT:.*]] = stablehlo.reshape %[[SORTED]] : (tensor<1x5xf32>) -> tensor<5xf32>
// CHECK: return %[[OUT]]
// CHECK-LABEL: func.func private @xla_sort_0_rows(
// CHECK: %[[PASSES:.*]] = arith.constant 3 : index
// CHECK: %[[BUF:.*]] = tensor.empty() : tensor<2x5xf32>
// CHECK: tensor.insert_slice %{{.*}} into %[[BUF]][0, 0] [1, 5] [1, 1]
// CHECK: scf.for {{.*}} to %[[PASSES]] {{.*}} -> (tensor<2x5xf32>)
// CHECK-NOT: scf.if
// CHECK: %[[LESS:.*]] = func.call @xla_sort_0_cmp(%{{.*}}, %{{.*}}) : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK: %[[RIGHT_FIRST_IF:.*]] = tensor.extract %[[LESS]][] : tensor<i1>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-LABEL: func.func private @xla_sort_0_cmp(
// CHECK-SAME: %[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>) -> tensor<i1>
// CHECK: %[[LT:.*]] = stablehlo.compare LT, %[[A]], %[[B]], TOTALORDER
// CHECK: return %[[LT]]
// CHECK-LABEL: func.func @ascending
// CHECK-SAME: (%[[X:.*]]: tensor<5xf32>)
// CHECK: %[[R:.*]] = call @xla_sort_0(%[[X]]) : (tensor<5xf32>) -> tensor<5xf32>
// CHECK-NOT: stablehlo.sort
// CHECK: return %[[R]]
func.func @ascending(%x: tensor<5xf32>) -> tensor<5xf32> {
  %r = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<5xf32>) -> tensor<5xf32>
  return %r : tensor<5xf32>
}

// -----

/// Sorting along dimension 0 of a 2-D pair transposes both operands so the
/// sort dimension is last, and the comparator gets both operands' elements
/// (it orders by the second operand: no radix sort).
// CHECK-LABEL: func.func private @xla_sort_0(
// CHECK-SAME: %[[K:.*]]: tensor<4x3xi32>, %[[V:.*]]: tensor<4x3xui8>
// CHECK: %[[KT:.*]] = stablehlo.transpose %[[K]], dims = [1, 0] : (tensor<4x3xi32>) -> tensor<3x4xi32>
// CHECK: %[[VT:.*]] = stablehlo.transpose %[[V]], dims = [1, 0] : (tensor<4x3xui8>) -> tensor<3x4xui8>
// CHECK: %[[S:.*]]:2 = call @xla_sort_0_rows(%[[KT]], %[[VT]])
// CHECK: stablehlo.transpose %[[S]]#0, dims = [1, 0]
// CHECK: stablehlo.transpose %[[S]]#1, dims = [1, 0]
// CHECK-LABEL: func.func private @xla_sort_0_rows(
// CHECK: func.call @xla_sort_0_cmp({{.*}}) : (tensor<i32>, tensor<i32>, tensor<ui8>, tensor<ui8>) -> tensor<i1>
// CHECK-LABEL: func.func private @xla_sort_0_cmp(
// CHECK: stablehlo.compare GT
// CHECK-LABEL: func.func @key_value
// CHECK: call @xla_sort_0(%{{.*}}, %{{.*}}) : (tensor<4x3xi32>, tensor<4x3xui8>)
func.func @key_value(%k: tensor<4x3xi32>, %v: tensor<4x3xui8>) -> (tensor<4x3xi32>, tensor<4x3xui8>) {
  %r:2 = "stablehlo.sort"(%k, %v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<ui8>, %d: tensor<ui8>):
    %gt = stablehlo.compare GT, %c, %d, UNSIGNED : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
    stablehlo.return %gt : tensor<i1>
  }) : (tensor<4x3xi32>, tensor<4x3xui8>) -> (tensor<4x3xi32>, tensor<4x3xui8>)
  return %r#0, %r#1 : tensor<4x3xi32>, tensor<4x3xui8>
}

// -----

/// A value the comparator uses from outside its region (a constant that CSE
/// hoisted) is passed through the helpers as an extra argument.
// CHECK-LABEL: func.func private @xla_sort_0_rows(
// CHECK-SAME: %{{.*}}: tensor<1x6xf16>, %[[CAP:.*]]: tensor<f16>
// CHECK: func.call @xla_sort_0_cmp(%{{.*}}, %{{.*}}, %[[CAP]])
// CHECK-LABEL: func.func private @xla_sort_0_cmp(
// CHECK-SAME: %[[A:.*]]: tensor<f16>, %[[B:.*]]: tensor<f16>, %[[Z:.*]]: tensor<f16>
// CHECK: stablehlo.compare EQ, %[[A]], %[[Z]]
// CHECK-LABEL: func.func @captured
// CHECK-SAME: (%[[X:.*]]: tensor<6xf16>)
// CHECK: %[[ZERO:.*]] = stablehlo.constant
// CHECK: call @xla_sort_0(%[[X]], %[[ZERO]]) : (tensor<6xf16>, tensor<f16>) -> tensor<6xf16>
func.func @captured(%x: tensor<6xf16>) -> tensor<6xf16> {
  %zero = stablehlo.constant dense<0.0> : tensor<f16>
  %r = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f16>, %b: tensor<f16>):
    %is_zero = stablehlo.compare EQ, %a, %zero, FLOAT : (tensor<f16>, tensor<f16>) -> tensor<i1>
    %a1 = stablehlo.select %is_zero, %zero, %a : tensor<i1>, tensor<f16>
    %lt = stablehlo.compare LT, %a1, %b, TOTALORDER : (tensor<f16>, tensor<f16>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<6xf16>) -> tensor<6xf16>
  return %r : tensor<6xf16>
}

// -----

/// Dynamic shapes are refused with a hint: the pass needs static sizes.
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{stablehlo.sort with dynamic shapes is not supported; run stablehlo-refine-shapes first}}
  %r = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

/// Integer keys compared with a plain `<` (values moved along): a stable LSD
/// radix sort, one pass per key byte (count, starts, moves); the comparator is
/// read, not called, so no comparator function is left.
// CHECK-LABEL: func.func private @xla_sort_0_rows(
// CHECK: %[[PASSES:.*]] = arith.constant 4 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[PASSES]]
// CHECK: arith.shrui
// CHECK: tensor.insert %{{.*}} : tensor<256xindex>
// CHECK-NOT: func.call
// CHECK-NOT: xla_sort_0_cmp
func.func @radix(%k: tensor<4x9xi32>, %v: tensor<4x9xf32>) -> (tensor<4x9xi32>, tensor<4x9xf32>) {
  %0:2 = "stablehlo.sort"(%k, %v) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<f32>):
    %1 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<4x9xi32>, tensor<4x9xf32>) -> (tensor<4x9xi32>, tensor<4x9xf32>)
  return %0#0, %0#1 : tensor<4x9xi32>, tensor<4x9xf32>
}
