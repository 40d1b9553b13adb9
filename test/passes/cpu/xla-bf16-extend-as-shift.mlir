// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-bf16-extend-as-shift)' --split-input-file | FileCheck %s

/// bf16 -> f32 widenings become integer code (bits as i16, zext, shift by 16,
/// bits as f32), vectors and scalars alike; the native rounding back to bf16
/// and widenings from other types stay.
// CHECK-LABEL: llvm.func @widen
// CHECK: %[[B:.*]] = llvm.bitcast %{{.*}} : vector<17xbf16> to vector<17xi16>
// CHECK: %[[Z:.*]] = llvm.zext %[[B]] : vector<17xi16> to vector<17xi32>
// CHECK: %[[C:.*]] = llvm.mlir.constant(dense<16> : vector<17xi32>) : vector<17xi32>
// CHECK: %[[S:.*]] = llvm.shl %[[Z]], %[[C]] : vector<17xi32>
// CHECK: %[[W:.*]] = llvm.bitcast %[[S]] : vector<17xi32> to vector<17xf32>
// CHECK: llvm.fadd %[[W]], %[[W]] : vector<17xf32>
// CHECK: llvm.fptrunc %{{.*}} : vector<17xf32> to vector<17xbf16>
// CHECK: %[[SB:.*]] = llvm.bitcast %{{.*}} : bf16 to i16
// CHECK: %[[SZ:.*]] = llvm.zext %[[SB]] : i16 to i32
// CHECK: %[[SC:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK: llvm.shl %[[SZ]], %[[SC]] : i32
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK-NOT: llvm.fpext %{{.*}} : {{.*}}bf16
llvm.func @widen(%v: vector<17xbf16>, %s: bf16, %h: f16) -> vector<17xbf16> {
  %w = llvm.fpext %v : vector<17xbf16> to vector<17xf32>
  %a = llvm.fadd %w, %w : vector<17xf32>
  %r = llvm.fptrunc %a : vector<17xf32> to vector<17xbf16>
  %sw = llvm.fpext %s : bf16 to f32
  %hw = llvm.fpext %h : f16 to f32
  llvm.return %r : vector<17xbf16>
}

// -----

/// A widening to f64 goes through f32: the shift makes the f32, hardware the rest.
// CHECK-LABEL: llvm.func @to_f64
// CHECK: %[[S:.*]] = llvm.shl %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: %[[F:.*]] = llvm.bitcast %[[S]] : vector<4xi32> to vector<4xf32>
// CHECK: %[[D:.*]] = llvm.fpext %[[F]] : vector<4xf32> to vector<4xf64>
// CHECK: llvm.return %[[D]]
llvm.func @to_f64(%v: vector<4xbf16>) -> vector<4xf64> {
  %w = llvm.fpext %v : vector<4xbf16> to vector<4xf64>
  llvm.return %w : vector<4xf64>
}
