// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-constants-into-loops)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-constants-into-loops,xla-fuse)' --split-input-file | FileCheck %s --check-prefix=FUSED

/// A loop body's splats that canonicalize hoisted (a broadcast of a rank-0
/// constant, a full-size splat constant) are copied into the body, once
/// each however many ops read them; a rank-0 constant and a value computed
/// outside the loop stay outside. With xla-fuse the body's kernel reads the
/// carries and %x, no splat array.
// CHECK-LABEL: func.func @body_splats
// CHECK: %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[ONE]]
// CHECK: %[[TWO:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<64x64xf32>
// CHECK: stablehlo.while
// CHECK: do {
// CHECK-DAG: %[[TWO2:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<64x64xf32>
// CHECK-DAG: %[[ONE2:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[B2:.*]] = stablehlo.broadcast_in_dim %[[ONE2]]
// CHECK: stablehlo.add %{{.*}}, %[[B2]]
// CHECK: stablehlo.multiply %{{.*}}, %[[TWO2]]
// CHECK: stablehlo.subtract %{{.*}}, %[[B2]]
// CHECK: stablehlo.divide %{{.*}}, %arg0
// CHECK-NOT: stablehlo.broadcast_in_dim
// CHECK: stablehlo.return
// FUSED-LABEL: func.func @body_splats
// FUSED: do {
// FUSED: "xla.fusion"(%{{[^,]*}}, %arg0) ({
// FUSED-NEXT: ^bb0(%{{.*}}: tensor<64x64xf32>, %{{.*}}: tensor<64x64xf32>):
func.func @body_splats(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
  %two = stablehlo.constant dense<2.0> : tensor<64x64xf32>
  %n0 = stablehlo.constant dense<0> : tensor<i64>
  %limit = stablehlo.constant dense<10> : tensor<i64>
  %r:2 = stablehlo.while(%n = %n0, %v = %x) : tensor<i64>, tensor<64x64xf32>
    cond {
      %c = stablehlo.compare LT, %n, %limit, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %a = stablehlo.add %v, %b : tensor<64x64xf32>
      %m = stablehlo.multiply %a, %two : tensor<64x64xf32>
      %s = stablehlo.subtract %m, %b : tensor<64x64xf32>
      %d = stablehlo.divide %s, %x : tensor<64x64xf32>
      %step = stablehlo.constant dense<1> : tensor<i64>
      %n1 = stablehlo.add %n, %step : tensor<i64>
      stablehlo.return %n1, %d : tensor<i64>, tensor<64x64xf32>
    }
  return %r#1 : tensor<64x64xf32>
}

// -----

/// A complex splat (its attribute not readable from Python: read as text)
/// is copied in like a real one (scipy.linalg.funm's loop raised here).
// CHECK-LABEL: func.func @complex_splat
// CHECK: stablehlo.while
// CHECK: do {
// CHECK: %[[H:.*]] = stablehlo.constant dense<(5.000000e-01,0.000000e+00)> : tensor<8xcomplex<f32>>
// CHECK: stablehlo.multiply %{{.*}}, %[[H]]
// FUSED-LABEL: func.func @complex_splat
func.func @complex_splat(%x: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  %half = stablehlo.constant dense<(0.5, 0.0)> : tensor<8xcomplex<f32>>
  %n0 = stablehlo.constant dense<0> : tensor<i64>
  %limit = stablehlo.constant dense<4> : tensor<i64>
  %r:2 = stablehlo.while(%n = %n0, %v = %x) : tensor<i64>, tensor<8xcomplex<f32>>
    cond {
      %c = stablehlo.compare LT, %n, %limit, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %m = stablehlo.multiply %v, %half : tensor<8xcomplex<f32>>
      %step = stablehlo.constant dense<1> : tensor<i64>
      %n1 = stablehlo.add %n, %step : tensor<i64>
      stablehlo.return %n1, %m : tensor<i64>, tensor<8xcomplex<f32>>
    }
  return %r#1 : tensor<8xcomplex<f32>>
}
