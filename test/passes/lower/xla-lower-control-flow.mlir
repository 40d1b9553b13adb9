// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-control-flow)' --split-input-file | FileCheck %s

/// A while loop becomes scf.while: the condition's 0-d predicate is extracted,
/// the body's stablehlo.return becomes scf.yield, the body ops stay StableHLO.
// CHECK-LABEL: func.func @count
// CHECK-SAME: (%[[N:.*]]: tensor<i64>)
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0>
// CHECK: %[[R:.*]]:2 = scf.while (%[[I:.*]] = %[[ZERO]], %[[S:.*]] = %[[ZERO]]) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
// CHECK:   %[[LT:.*]] = stablehlo.compare LT, %[[I]], %[[N]]
// CHECK:   %[[P:.*]] = tensor.extract %[[LT]][] : tensor<i1>
// CHECK:   scf.condition(%[[P]]) %[[I]], %[[S]] : tensor<i64>, tensor<i64>
// CHECK: } do {
// CHECK: ^bb0(%[[BI:.*]]: tensor<i64>, %[[BS:.*]]: tensor<i64>):
// CHECK:   %[[NEXT:.*]] = stablehlo.add %[[BI]], %{{.*}}
// CHECK:   %[[SUM:.*]] = stablehlo.add %[[BS]], %[[BI]]
// CHECK:   scf.yield %[[NEXT]], %[[SUM]] : tensor<i64>, tensor<i64>
// CHECK: return %[[R]]#1
// CHECK-NOT: stablehlo.while
func.func @count(%n: tensor<i64>) -> tensor<i64> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %s = %zero) : tensor<i64>, tensor<i64>
  cond {
    %lt = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %next = stablehlo.add %i, %one : tensor<i64>
    %sum = stablehlo.add %s, %i : tensor<i64>
    stablehlo.return %next, %sum : tensor<i64>, tensor<i64>
  }
  return %r#1 : tensor<i64>
}

// -----

/// Unsigned types are kept as they are (stablehlo-convert-to-signless later).
// CHECK-LABEL: func.func @unsigned
// CHECK: scf.while (%{{.*}} = %{{.*}}) : (tensor<4xui32>) -> tensor<4xui32>
// CHECK: scf.yield %{{.*}} : tensor<4xui32>
func.func @unsigned(%x: tensor<4xui32>, %p: tensor<i1>) -> tensor<4xui32> {
  %r = stablehlo.while(%v = %x) : tensor<4xui32>
  cond {
    stablehlo.return %p : tensor<i1>
  } do {
    %w = stablehlo.add %v, %v : tensor<4xui32>
    stablehlo.return %w : tensor<4xui32>
  }
  return %r : tensor<4xui32>
}

// -----

/// if becomes scf.if on the extracted predicate; values from above stay captured.
// CHECK-LABEL: func.func @select_branch
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[A:.*]]: tensor<2xf32>)
// CHECK: %[[C:.*]] = tensor.extract %[[P]][] : tensor<i1>
// CHECK: %[[R:.*]] = scf.if %[[C]] -> (tensor<2xf32>) {
// CHECK:   %[[NEG:.*]] = stablehlo.negate %[[A]]
// CHECK:   scf.yield %[[NEG]] : tensor<2xf32>
// CHECK: } else {
// CHECK:   scf.yield %[[A]] : tensor<2xf32>
// CHECK: return %[[R]]
func.func @select_branch(%p: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.if"(%p) ({
    %neg = stablehlo.negate %a : tensor<2xf32>
    stablehlo.return %neg : tensor<2xf32>
  }, {
    stablehlo.return %a : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

/// case becomes scf.index_switch; the last branch is the default, so an
/// out-of-range index (negative or too large) runs it, as the spec says.
// CHECK-LABEL: func.func @three_way
// CHECK-SAME: (%[[I:.*]]: tensor<i32>, %[[A:.*]]: tensor<f32>)
// CHECK: %[[E:.*]] = tensor.extract %[[I]][] : tensor<i32>
// CHECK: %[[X:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK: %[[R:.*]] = scf.index_switch %[[X]] -> tensor<f32>
// CHECK: case 0 {
// CHECK:   scf.yield %[[A]] : tensor<f32>
// CHECK: case 1 {
// CHECK:   %[[NEG:.*]] = stablehlo.negate %[[A]]
// CHECK:   scf.yield %[[NEG]] : tensor<f32>
// CHECK: default {
// CHECK:   %[[ABS:.*]] = stablehlo.abs %[[A]]
// CHECK:   scf.yield %[[ABS]] : tensor<f32>
// CHECK: return %[[R]]
func.func @three_way(%i: tensor<i32>, %a: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<f32>
  }, {
    %neg = stablehlo.negate %a : tensor<f32>
    stablehlo.return %neg : tensor<f32>
  }, {
    %abs = stablehlo.abs %a : tensor<f32>
    stablehlo.return %abs : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

/// A case with one branch has only the default.
// CHECK-LABEL: func.func @one_branch
// CHECK: scf.index_switch %{{.*}} -> tensor<f32>
// CHECK-NOT: case
// CHECK: default {
func.func @one_branch(%i: tensor<i32>, %a: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

/// Nested control flow: the inner op is lowered too, inside the outer body.
// CHECK-LABEL: func.func @nested
// CHECK: scf.while
// CHECK: } do {
// CHECK:   scf.if
// CHECK-NOT: stablehlo.while
// CHECK-NOT: stablehlo.if
func.func @nested(%x: tensor<f32>, %p: tensor<i1>) -> tensor<f32> {
  %r = stablehlo.while(%v = %x) : tensor<f32>
  cond {
    stablehlo.return %p : tensor<i1>
  } do {
    %w = "stablehlo.if"(%p) ({
      %n = stablehlo.negate %v : tensor<f32>
      stablehlo.return %n : tensor<f32>
    }, {
      stablehlo.return %v : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    stablehlo.return %w : tensor<f32>
  }
  return %r : tensor<f32>
}
