// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse)' | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse{producer-kernels=false})' | FileCheck %s --check-prefix=APART

/// A continued fraction's step in a loop (jax's igamma, betainc): `s` and the
/// ratio are read by several updates, each kept by the mask `go`.
/// Producer-consumer fusion leaves four kernels (a producer read by two
/// kernels stays in the first that took it); with producer-kernels each kernel
/// joins the one reading it, the mask (i1) kernel too: one kernel a trip.
// CHECK-LABEL: func.func @fraction
// CHECK: stablehlo.while
// CHECK: } do {
// CHECK-COUNT-1: "xla.fusion"
// CHECK-NOT: "xla.fusion"
// CHECK: {kind = "multi_output"} : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xi1>) -> (tensor<16xi1>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
// CHECK: stablehlo.return %{{.*}}, %[[R:.*]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
// APART-LABEL: func.func @fraction
// APART: } do {
// APART-COUNT-4: "xla.fusion"
func.func @fraction(%g: tensor<16xi1>, %p0: tensor<16xf32>, %q0: tensor<16xf32>, %a0: tensor<16xf32>, %x: tensor<16xf32>, %n: tensor<i32>) -> tensor<16xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:5 = stablehlo.while(%i = %c0, %go = %g, %p = %p0, %q = %q0, %a = %a0) : tensor<i32>, tensor<16xi1>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = stablehlo.add %a, %x : tensor<16xf32>
      %pn = stablehlo.multiply %p, %s : tensor<16xf32>
      %qs = stablehlo.multiply %q, %s : tensor<16xf32>
      %qn = stablehlo.add %qs, %x : tensor<16xf32>
      %ratio = stablehlo.divide %pn, %qn : tensor<16xf32>
      %d = stablehlo.subtract %ratio, %p : tensor<16xf32>
      %e = stablehlo.abs %d : tensor<16xf32>
      %eps = stablehlo.constant dense<1.0e-4> : tensor<16xf32>
      %more = stablehlo.compare GT, %e, %eps, FLOAT : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
      %go2 = stablehlo.and %go, %more : tensor<16xi1>
      %qd = stablehlo.divide %qn, %s : tensor<16xf32>
      %p2 = stablehlo.select %go, %ratio, %p : tensor<16xi1>, tensor<16xf32>
      %q2 = stablehlo.select %go, %qd, %q : tensor<16xi1>, tensor<16xf32>
      %a2 = stablehlo.select %go, %s, %a : tensor<16xi1>, tensor<16xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i2 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i2, %go2, %p2, %q2, %a2 : tensor<i32>, tensor<16xi1>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
    }
  return %r#2 : tensor<16xf32>
}

/// Outside a loop, kernels that together stay under 32 ops (xla-outline-fusions'
/// min-ops) keep apart: linalg's fusion would split the merged one again.
// CHECK-LABEL: func.func @outside
// CHECK-COUNT-2: "xla.fusion"
func.func @outside(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %s = stablehlo.add %x, %y : tensor<16xf32>
  %e = stablehlo.exponential %s : tensor<16xf32>
  %t = stablehlo.multiply %e, %x : tensor<16xf32>
  %u = stablehlo.multiply %e, %y : tensor<16xf32>
  %v = stablehlo.add %t, %u : tensor<16xf32>
  %w = stablehlo.subtract %v, %s : tensor<16xf32>
  return %e, %v, %w : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

/// A Lentz step with its convergence test (jax's betainc): the kernel that
/// updates `c` and `d` also reduces `any(|c * d - 1| >= eps)`; the elementwise
/// ops reading its values, `1 / d` and the running product `h * (c * d)`, join
/// it rather than running as two kernels of their own after it. The loop's
/// `or` result (a reduction's) is read by nothing in the body.
// CHECK-LABEL: func.func @lentz
// CHECK: } do {
// CHECK-COUNT-1: "xla.fusion"
// CHECK-NOT: "xla.fusion"
// CHECK: stablehlo.divide %{{.*}}, %{{.*}} : tensor<64xf32>
// CHECK: stablehlo.multiply %{{.*}}, %{{.*}} : tensor<64xf32>
// CHECK: stablehlo.reduce
// CHECK: {kind = "multi_output"}
// CHECK-NOT: stablehlo.divide
// CHECK-NOT: stablehlo.multiply
// CHECK: stablehlo.return
// APART-LABEL: func.func @lentz
// APART: } do {
// APART-COUNT-2: "xla.fusion"
// APART: %{{.*}} = stablehlo.multiply %iterArg
// APART: stablehlo.return
func.func @lentz(%c0: tensor<64xf32>, %d0: tensor<64xf32>, %h0: tensor<64xf32>, %a: tensor<64xf32>) -> tensor<64xf32> {
  %t = stablehlo.constant dense<true> : tensor<i1>
  %r:4 = stablehlo.while(%go = %t, %c = %c0, %d = %d0, %h = %h0) : tensor<i1>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
    cond {
      stablehlo.return %go : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1.0> : tensor<64xf32>
      %eps = stablehlo.constant dense<1.0e-7> : tensor<64xf32>
      %ac = stablehlo.divide %a, %c : tensor<64xf32>
      %c2 = stablehlo.add %one, %ac : tensor<64xf32>
      %ad = stablehlo.multiply %a, %d : tensor<64xf32>
      %dd = stablehlo.add %one, %ad : tensor<64xf32>
      %d2 = stablehlo.divide %one, %dd : tensor<64xf32>
      %cd = stablehlo.multiply %c2, %d2 : tensor<64xf32>
      %h2 = stablehlo.multiply %h, %cd : tensor<64xf32>
      %m = stablehlo.subtract %cd, %one : tensor<64xf32>
      %e = stablehlo.abs %m : tensor<64xf32>
      %big = stablehlo.compare GE, %e, %eps, FLOAT : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xi1>
      %f = stablehlo.constant dense<false> : tensor<i1>
      %any = stablehlo.reduce(%big init: %f) applies stablehlo.or across dimensions = [0] : (tensor<64xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %any, %c2, %d2, %h2 : tensor<i1>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
    }
  return %r#3 : tensor<64xf32>
}
