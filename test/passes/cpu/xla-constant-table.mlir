// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-constant-table)' --split-input-file | FileCheck %s

/// Each constant's address is read from its entry of one table (as many
/// entries as xla.constant_arguments lists, used or not); the per-constant
/// external globals are gone, so nothing but the table is left to define.
// CHECK: llvm.mlir.global external constant @__xlac_constant_table() {addr_space = 0 : i32, alignment = 8 : i64} : !llvm.array<3 x ptr>
// CHECK-NOT: @__xlac_constant_0
// CHECK-NOT: @__xlac_constant_2
// CHECK-LABEL: llvm.func @main
// CHECK: %[[T0:.*]] = llvm.mlir.addressof @__xlac_constant_table : !llvm.ptr
// CHECK: %[[E0:.*]] = llvm.getelementptr %[[T0]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[W:.*]] = llvm.load %[[E0]] invariant {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[T1:.*]] = llvm.mlir.addressof @__xlac_constant_table : !llvm.ptr
// CHECK: %[[E1:.*]] = llvm.getelementptr %[[T1]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[V:.*]] = llvm.load %[[E1]] invariant {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.load %[[W]] : !llvm.ptr -> i32
// CHECK: llvm.load %[[V]] : !llvm.ptr -> f32
module attributes {xla.constant_arguments = [dense<1.0> : tensor<128xf32>, dense<1> : tensor<8xi32>, dense<2> : tensor<64xi32>]} {
  llvm.mlir.global external constant @__xlac_constant_2() {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<64 x i32>
  llvm.mlir.global external constant @__xlac_constant_0() {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<128 x f32>
  llvm.func @main(%out: !llvm.ptr, %other: !llvm.ptr) {
    %0 = llvm.mlir.addressof @__xlac_constant_2 : !llvm.ptr
    %1 = llvm.mlir.addressof @__xlac_constant_0 : !llvm.ptr
    %2 = llvm.load %0 : !llvm.ptr -> i32
    %3 = llvm.load %1 : !llvm.ptr -> f32
    llvm.store %2, %out : i32, !llvm.ptr
    llvm.store %3, %other : f32, !llvm.ptr
    llvm.return
  }
}

// -----

/// A program without constants is left as it is.
// CHECK-LABEL: llvm.func @plain
// CHECK-NOT: __xlac_constant_table
llvm.mlir.global private constant @small(dense<1.0> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
llvm.func @plain(%out: !llvm.ptr) {
  %0 = llvm.mlir.addressof @small : !llvm.ptr
  %1 = llvm.load %0 : !llvm.ptr -> f32
  llvm.store %1, %out : f32, !llvm.ptr
  llvm.return
}
