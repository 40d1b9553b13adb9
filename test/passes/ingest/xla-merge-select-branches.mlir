// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-merge-select-branches)' --split-input-file | FileCheck %s

/// Two Horner chains on the same z, one step longer on the left: one chain on
/// selected coefficients; the left's extra step is selected against the
/// right's first coefficient as it is (nothing padded).
// CHECK-LABEL: func.func @horner
// CHECK-SAME: (%[[C:.*]]: tensor<4xi1>, %[[Z:.*]]: tensor<4xf32>)
// CHECK: %[[P1:.*]] = stablehlo.multiply %cst, %[[Z]]
// CHECK: %[[P2:.*]] = stablehlo.add %[[P1]], %cst_0
// CHECK: %[[S1:.*]] = stablehlo.select %[[C]], %[[P2]], %cst_2
// CHECK: %[[M1:.*]] = stablehlo.multiply %[[S1]], %[[Z]]
// CHECK: %[[K1:.*]] = stablehlo.select %[[C]], %cst_1, %cst_3
// CHECK: %[[A1:.*]] = stablehlo.add %[[M1]], %[[K1]]
// CHECK-NEXT: return %[[A1]]
func.func @horner(%c: tensor<4xi1>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %p0 = stablehlo.constant dense<1.0> : tensor<4xf32>
  %p1 = stablehlo.constant dense<2.0> : tensor<4xf32>
  %p2 = stablehlo.constant dense<3.0> : tensor<4xf32>
  %r0 = stablehlo.constant dense<4.0> : tensor<4xf32>
  %r1 = stablehlo.constant dense<5.0> : tensor<4xf32>
  %0 = stablehlo.multiply %p0, %z : tensor<4xf32>
  %1 = stablehlo.add %0, %p1 : tensor<4xf32>
  %2 = stablehlo.multiply %1, %z : tensor<4xf32>
  %3 = stablehlo.add %2, %p2 : tensor<4xf32>
  %4 = stablehlo.multiply %r0, %z : tensor<4xf32>
  %5 = stablehlo.add %4, %r1 : tensor<4xf32>
  %6 = stablehlo.select %c, %3, %5 : tensor<4xi1>, tensor<4xf32>
  return %6 : tensor<4xf32>
}

// -----

/// One op a side with both operands different: merging saves nothing.
// CHECK-LABEL: func.func @no_gain
// CHECK-COUNT-2: stablehlo.multiply
// CHECK: stablehlo.select
func.func @no_gain(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>, %d: tensor<4xf32>, %e: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<4xf32>
  %1 = stablehlo.multiply %d, %e : tensor<4xf32>
  %2 = stablehlo.select %c, %0, %1 : tensor<4xi1>, tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

/// A shared operand needs no select: exp(a * z) or exp(b * z) is exp((a or b) * z).
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[C:.*]]: tensor<4xi1>, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[S:.*]] = stablehlo.select %[[C]], %[[A]], %[[B]]
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[S]], %[[Z]]
// CHECK-NEXT: %[[E:.*]] = stablehlo.exponential %[[M]]
// CHECK-NEXT: return %[[E]]
func.func @shared(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %z : tensor<4xf32>
  %1 = stablehlo.exponential %0 : tensor<4xf32>
  %2 = stablehlo.multiply %b, %z : tensor<4xf32>
  %3 = stablehlo.exponential %2 : tensor<4xf32>
  %4 = stablehlo.select %c, %1, %3 : tensor<4xi1>, tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

/// A side with another user (here the condition is computed from it) stays
/// whole: nothing of it could be erased.
// CHECK-LABEL: func.func @other_user
// CHECK-COUNT-2: stablehlo.exponential
// CHECK: stablehlo.select
func.func @other_user(%a: tensor<4xf32>, %b: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %z : tensor<4xf32>
  %1 = stablehlo.exponential %0 : tensor<4xf32>
  %2 = stablehlo.multiply %b, %z : tensor<4xf32>
  %3 = stablehlo.exponential %2 : tensor<4xf32>
  %c = stablehlo.compare LT, %1, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %4 = stablehlo.select %c, %1, %3 : tensor<4xi1>, tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

/// Ops that differ in attributes (the comparison) or operand types are not one op.
// CHECK-LABEL: func.func @different
// CHECK-COUNT-2: stablehlo.compare
// CHECK-COUNT-2: stablehlo.convert
// CHECK-COUNT-2: stablehlo.select
func.func @different(%c: tensor<4xi1>, %a: tensor<4xf32>, %z: tensor<4xf32>, %d: tensor<4xf64>) -> (tensor<4xi1>, tensor<4xf32>) {
  %0 = stablehlo.compare LT, %a, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = stablehlo.compare GT, %a, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = stablehlo.convert %a : tensor<4xf32>
  %3 = stablehlo.convert %d : (tensor<4xf64>) -> tensor<4xf32>
  %4 = stablehlo.select %c, %0, %1 : tensor<4xi1>, tensor<4xi1>
  %5 = stablehlo.select %c, %2, %3 : tensor<4xi1>, tensor<4xf32>
  return %4, %5 : tensor<4xi1>, tensor<4xf32>
}
