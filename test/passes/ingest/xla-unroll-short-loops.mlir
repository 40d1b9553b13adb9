// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-unroll-short-loops)' --split-input-file | FileCheck %s

/// for (i = 0; i < 3; i += 1) x = x * y: three copies of the body, the
/// captured %y read by each, the counter's adds kept (dead, folded later).
// CHECK-LABEL: func.func @fori_loop
// CHECK-NOT: stablehlo.while
// CHECK: %[[X1:.*]] = stablehlo.multiply %arg0, %arg1
// CHECK: %[[X2:.*]] = stablehlo.multiply %[[X1]], %arg1
// CHECK: %[[X3:.*]] = stablehlo.multiply %[[X2]], %arg1
// CHECK: return %[[X3]]
func.func @fori_loop(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %m = stablehlo.multiply %v, %y : tensor<4xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %m : tensor<i32>, tensor<4xf32>
    }
  return %r#1 : tensor<4xf32>
}

// -----

/// Nine trips (more than max-trips), a bound only known at run time, and a
/// step of 2 all stay loops.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: stablehlo.while
func.func @kept(%x: tensor<4xf32>, %bound: tensor<i32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %nine = stablehlo.constant dense<9> : tensor<i32>
  %a:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %nine, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %m = stablehlo.multiply %v, %v : tensor<4xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %m : tensor<i32>, tensor<4xf32>
    }
  %b:2 = stablehlo.while(%i = %zero, %v = %a#1) : tensor<i32>, tensor<4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %bound, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %m = stablehlo.multiply %v, %v : tensor<4xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %m : tensor<i32>, tensor<4xf32>
    }
  %c:2 = stablehlo.while(%i = %zero, %v = %b#1) : tensor<i32>, tensor<4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %nine, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %m = stablehlo.multiply %v, %v : tensor<4xf32>
      %n = stablehlo.add %i, %two : tensor<i32>
      stablehlo.return %n, %m : tensor<i32>, tensor<4xf32>
    }
  return %c#1 : tensor<4xf32>
}
