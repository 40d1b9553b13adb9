// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-constant-selects-as-permutes)' --split-input-file | FileCheck %s

/// A select of two f32 splats on 16 lanes: the condition sign-extended, each
/// ymm half indexing the table [f, f, f, t] per 128-bit lane (vpermilps), the
/// halves joined. A row of an n-D constant counts as a splat too.
// CHECK-LABEL: llvm.func @two_constants
// CHECK: %[[T:.*]] = llvm.mlir.constant(dense<[2.000000e+00, 2.000000e+00, 2.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 1.000000e+00]> : vector<8xf32>)
// CHECK: %[[I:.*]] = llvm.sext %{{.*}} : vector<16xi1> to vector<16xi32>
// CHECK: %[[L:.*]] = llvm.shufflevector %[[I]], %[[I]] [0, 1, 2, 3, 4, 5, 6, 7]
// CHECK: %[[A:.*]] = llvm.call_intrinsic "llvm.x86.avx.vpermilvar.ps.256"(%[[T]], %[[L]])
// CHECK: %[[H:.*]] = llvm.shufflevector %[[I]], %[[I]] [8, 9, 10, 11, 12, 13, 14, 15]
// CHECK: %[[B:.*]] = llvm.call_intrinsic "llvm.x86.avx.vpermilvar.ps.256"(%[[T]], %[[H]])
// CHECK: %[[R:.*]] = llvm.shufflevector %[[A]], %[[B]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
// CHECK: llvm.return %[[R]]
llvm.func @two_constants(%c: vector<16xi1>) -> vector<16xf32> {
  %rows = llvm.mlir.constant(dense<1.0> : vector<2x16xf32>) : !llvm.array<2 x vector<16xf32>>
  %t = llvm.extractvalue %rows[1] : !llvm.array<2 x vector<16xf32>>
  %f = llvm.mlir.constant(dense<2.0> : vector<16xf32>) : vector<16xf32>
  %r = llvm.select %c, %t, %f : vector<16xi1>, vector<16xf32>
  llvm.return %r : vector<16xf32>
}

// -----

/// Left as selects: a value that is not a constant, +0 (LLVM's one and with
/// the mask), 12 lanes (not whole ymm registers in a power of two), f64, one
/// i1 for every lane.
// CHECK-LABEL: llvm.func @left
// CHECK-NOT: vpermilvar
// CHECK-COUNT-5: llvm.select
llvm.func @left(%c: vector<8xi1>, %v: vector<8xf32>, %c12: vector<12xi1>, %d: vector<4xi1>, %s: i1) -> vector<8xf32> {
  %one = llvm.mlir.constant(dense<1.0> : vector<8xf32>) : vector<8xf32>
  %zero = llvm.mlir.constant(dense<0.0> : vector<8xf32>) : vector<8xf32>
  %a = llvm.select %c, %one, %v : vector<8xi1>, vector<8xf32>
  %b = llvm.select %c, %one, %zero : vector<8xi1>, vector<8xf32>
  %one12 = llvm.mlir.constant(dense<1.0> : vector<12xf32>) : vector<12xf32>
  %two12 = llvm.mlir.constant(dense<2.0> : vector<12xf32>) : vector<12xf32>
  %e = llvm.select %c12, %one12, %two12 : vector<12xi1>, vector<12xf32>
  %one4 = llvm.mlir.constant(dense<1.0> : vector<4xf64>) : vector<4xf64>
  %two4 = llvm.mlir.constant(dense<2.0> : vector<4xf64>) : vector<4xf64>
  %g = llvm.select %d, %one4, %two4 : vector<4xi1>, vector<4xf64>
  %two = llvm.mlir.constant(dense<2.0> : vector<8xf32>) : vector<8xf32>
  %h = llvm.select %s, %one, %two : i1, vector<8xf32>
  llvm.return %a : vector<8xf32>
}
