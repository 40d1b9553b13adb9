// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-split-long-blocks{max-ops=4 longer-than=4})' --split-input-file | FileCheck %s

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

// -----

/// Vectors of i1 never cross into a part (an AVX-512 target keeps them in
/// mask registers, and LLVM aborted passing them): the ops that make or read
/// them stay, and the f32 work around them goes into parts.
// CHECK-LABEL: llvm.func @masks
// CHECK: %[[A:.*]] = llvm.call @xla_part_0(%{{.*}}) {no_inline} : (vector<4xf32>) -> vector<4xf32>
// CHECK-NEXT: %[[M:.*]] = llvm.fcmp "olt" %[[A]], %{{.*}} : vector<4xf32>
// CHECK-NEXT: %[[S:.*]] = llvm.select %[[M]], %[[A]], %{{.*}} : vector<4xi1>, vector<4xf32>
// CHECK-NEXT: llvm.call @xla_part_1(%[[S]]) {no_inline} : (vector<4xf32>) -> vector<4xf32>
// CHECK-NOT: xi1>{{.*}}) -> 
// CHECK: llvm.func @xla_part_0
// CHECK: llvm.func @xla_part_1
llvm.func @masks(%x: vector<4xf32>) -> vector<4xf32> {
  %a1 = llvm.fadd %x, %x : vector<4xf32>
  %a2 = llvm.fmul %a1, %x : vector<4xf32>
  %a3 = llvm.fsub %a2, %x : vector<4xf32>
  %a4 = llvm.fadd %a3, %a1 : vector<4xf32>
  %m = llvm.fcmp "olt" %a4, %x : vector<4xf32>
  %s = llvm.select %m, %a4, %x : vector<4xi1>, vector<4xf32>
  %b1 = llvm.fadd %s, %s : vector<4xf32>
  %b2 = llvm.fmul %b1, %s : vector<4xf32>
  %b3 = llvm.fsub %b2, %s : vector<4xf32>
  %b4 = llvm.fadd %b3, %b1 : vector<4xf32>
  llvm.return %b4 : vector<4xf32>
}
