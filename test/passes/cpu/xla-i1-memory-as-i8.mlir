// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-i1-memory-as-i8)' | FileCheck %s

/// Vector moves of i1 lanes read and write bytes: a load or masked load (and
/// its pass-through) as i8 lanes truncated to i1, a store or masked store of
/// i1 lanes zero-extended to i8 first. The masks stay i1 and so do scalar
/// i1 moves, which LLVM already makes byte moves.
// CHECK-LABEL: llvm.func @moves
// CHECK: %[[B:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> vector<8xi8>
// CHECK: %[[M:.*]] = llvm.trunc %[[B]] : vector<8xi8> to vector<8xi1>
// CHECK: %[[W:.*]] = llvm.zext %[[M]] : vector<8xi1> to vector<8xi8>
// CHECK: llvm.store %[[W]], %{{.*}} : vector<8xi8>, !llvm.ptr
// CHECK: %[[P:.*]] = llvm.zext %{{.*}} : vector<8xi1> to vector<8xi8>
// CHECK: %[[L:.*]] = llvm.intr.masked.load %{{.*}}, %{{.*}}, %[[P]] {alignment = 1 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xi8>) -> vector<8xi8>
// CHECK: %[[T:.*]] = llvm.trunc %[[L]] : vector<8xi8> to vector<8xi1>
// CHECK: %[[S:.*]] = llvm.zext %[[T]] : vector<8xi1> to vector<8xi8>
// CHECK: llvm.intr.masked.store %[[S]], %{{.*}}, %{{.*}} {alignment = 1 : i32} : vector<8xi8>, vector<8xi1> into !llvm.ptr
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> i1
// CHECK: llvm.store %{{.*}}, %{{.*}} : i1, !llvm.ptr
// CHECK: llvm.intr.masked.load %{{.*}} -> vector<8xf32>
llvm.func @moves(%src: !llvm.ptr, %dst: !llvm.ptr, %mask: vector<8xi1>) {
  %v = llvm.load %src {alignment = 1 : i64} : !llvm.ptr -> vector<8xi1>
  llvm.store %v, %dst : vector<8xi1>, !llvm.ptr
  %m = llvm.intr.masked.load %src, %mask, %v {alignment = 1 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xi1>) -> vector<8xi1>
  llvm.intr.masked.store %m, %dst, %mask {alignment = 1 : i32} : vector<8xi1>, vector<8xi1> into !llvm.ptr
  %s = llvm.load %src : !llvm.ptr -> i1
  llvm.store %s, %dst : i1, !llvm.ptr
  %pass = llvm.mlir.poison : vector<8xf32>
  %f = llvm.intr.masked.load %src, %mask, %pass {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
  llvm.return
}
