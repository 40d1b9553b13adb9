// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-split-long-blocks{max-ops=4 longer-than=4})' | FileCheck %s

/// A block of more than 4 ops: runs of at most 4 go into parts,
/// called in place. Constants stay (copied into the parts that read them);
/// the alloca stays and ends a run; what later code reads comes back, two
/// values in a struct.
// CHECK-LABEL: llvm.func @entry
// CHECK-SAME: (%[[A:.*]]: i64, %[[P:.*]]: !llvm.ptr)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64)
// CHECK: %[[R:.*]] = llvm.call @xla_part_0(%[[A]], %[[P]]) {no_inline} : (i64, !llvm.ptr) -> !llvm.struct<(i64, i64)>
// CHECK: %[[X:.*]] = llvm.extractvalue %[[R]][0]
// CHECK: %[[Y:.*]] = llvm.extractvalue %[[R]][1]
// CHECK: llvm.alloca
// CHECK: %[[S:.*]] = llvm.add %[[X]], %[[Y]]
// CHECK: llvm.return %[[S]]
// CHECK: llvm.func @xla_part_0(%[[PA:.*]]: i64, %[[PP:.*]]: !llvm.ptr) -> !llvm.struct<(i64, i64)> attributes {no_inline, sym_visibility = "private"}
// CHECK: %[[C:.*]] = llvm.mlir.constant(1 : i64)
// CHECK: llvm.add %[[PA]], %[[C]]
// CHECK: llvm.store {{.*}}, %[[PP]]
// CHECK: llvm.insertvalue
// CHECK: llvm.return {{.*}} : !llvm.struct<(i64, i64)>
llvm.func @entry(%a: i64, %p: !llvm.ptr) -> i64 {
  %one = llvm.mlir.constant(1 : i64) : i64
  %b = llvm.add %a, %one : i64
  %c = llvm.mul %b, %b : i64
  llvm.store %c, %p : i64, !llvm.ptr
  %d = llvm.sub %c, %a : i64
  %buf = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  %s = llvm.add %c, %d : i64
  llvm.return %s : i64
}
