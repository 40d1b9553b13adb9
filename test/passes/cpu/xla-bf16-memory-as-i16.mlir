// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-bf16-memory-as-i16)' --split-input-file | FileCheck %s

/// bf16 values that are only loaded, selected, stored and moved by masked
/// vector loads/stores become i16, constants are i16 constants of the same
/// bits, and bitcasts to i16 fold away.
// CHECK-LABEL: llvm.func @moves
// CHECK: %[[INF:.*]] = llvm.mlir.constant(32640 : i16) : i16
// CHECK: %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK: llvm.zext %[[A]] : i16 to i32
// CHECK: %[[S:.*]] = llvm.select %{{.*}}, %[[A]], %[[INF]] : i1, i16
// CHECK: llvm.store %[[S]], %{{.*}} : i16, !llvm.ptr
// CHECK: llvm.intr.masked.load {{.*}} -> vector<16xi16>
// CHECK: llvm.intr.masked.store {{.*}} : vector<16xi16>, vector<16xi1> into !llvm.ptr
// CHECK-NOT: -> bf16
// CHECK-NOT: : bf16, !llvm.ptr
// CHECK: llvm.return
llvm.func @moves(%src: !llvm.ptr, %dst: !llvm.ptr, %c: i1, %mask: vector<16xi1>) {
  %inf = llvm.mlir.constant(0x7F80 : bf16) : bf16
  %a = llvm.load %src : !llvm.ptr -> bf16
  %bits = llvm.bitcast %a : bf16 to i16
  %wide = llvm.zext %bits : i16 to i32
  %s = llvm.select %c, %a, %inf : i1, bf16
  llvm.store %s, %dst : bf16, !llvm.ptr
  %pass = llvm.mlir.poison : vector<16xbf16>
  %v = llvm.intr.masked.load %src, %mask, %pass {alignment = 2 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xbf16>) -> vector<16xbf16>
  llvm.intr.masked.store %v, %dst, %mask {alignment = 2 : i32} : vector<16xbf16>, vector<16xi1> into !llvm.ptr
  llvm.return
}

// -----

/// A function that computes in bf16 (native conversions) is left as it is.
// CHECK-LABEL: llvm.func @native
// CHECK: llvm.fptrunc %{{.*}} : f32 to bf16
// CHECK: llvm.store %{{.*}}, %{{.*}} : bf16, !llvm.ptr
llvm.func @native(%x: f32, %dst: !llvm.ptr) {
  %b = llvm.fptrunc %x : f32 to bf16
  llvm.store %b, %dst : bf16, !llvm.ptr
  llvm.return
}

// -----

/// A 2-D bf16 vector (a 16 x 16 block of B widened in a matmul's packing)
/// is an array of 1-D vectors in LLVM: the array's vectors become i16 too.
// CHECK-LABEL: llvm.func @block
// CHECK: llvm.mlir.poison : !llvm.array<2 x vector<16xi16>>
// CHECK: %[[ROW:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xi16>
// CHECK: llvm.insertvalue %[[ROW]], %{{.*}}[0] : !llvm.array<2 x vector<16xi16>>
// CHECK-NOT: bf16
llvm.func @block(%src: !llvm.ptr, %dst: !llvm.ptr) {
  %empty = llvm.mlir.poison : !llvm.array<2 x vector<16xbf16>>
  %row = llvm.load %src : !llvm.ptr -> vector<16xbf16>
  %block = llvm.insertvalue %row, %empty[0] : !llvm.array<2 x vector<16xbf16>>
  %back = llvm.extractvalue %block[0] : !llvm.array<2 x vector<16xbf16>>
  llvm.store %back, %dst : vector<16xbf16>, !llvm.ptr
  llvm.return
}

// -----

/// A constant array of bf16 vectors (a 2-D register tile's initial value, as
/// a bf16 convolution's) is an i16 constant of the same bits: an array cannot
/// be bitcast in LLVM.
// CHECK-LABEL: llvm.func @constant_array
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(dense<0> : vector<2x8xi16>) : !llvm.array<2 x vector<8xi16>>
// CHECK: %[[ROWS:.*]] = llvm.mlir.constant(dense<{{\[}}[16256, -16384], [32704, 0]]> : vector<2x2xi16>) : !llvm.array<2 x vector<2xi16>>
// CHECK: llvm.insertvalue %{{.*}}, %[[ZERO]][0] : !llvm.array<2 x vector<8xi16>>
// CHECK: llvm.extractvalue %[[ROWS]][1] : !llvm.array<2 x vector<2xi16>>
// CHECK-NOT: bf16
llvm.func @constant_array(%src: !llvm.ptr, %dst: !llvm.ptr) {
  %zero = llvm.mlir.constant(dense<0.0> : vector<2x8xbf16>) : !llvm.array<2 x vector<8xbf16>>
  %rows = llvm.mlir.constant(dense<[[1.0, -2.0], [0x7FC0, 0.0]]> : vector<2x2xbf16>) : !llvm.array<2 x vector<2xbf16>>
  %row = llvm.load %src : !llvm.ptr -> vector<8xbf16>
  %block = llvm.insertvalue %row, %zero[0] : !llvm.array<2 x vector<8xbf16>>
  %back = llvm.extractvalue %block[0] : !llvm.array<2 x vector<8xbf16>>
  llvm.store %back, %dst : vector<8xbf16>, !llvm.ptr
  %second = llvm.extractvalue %rows[1] : !llvm.array<2 x vector<2xbf16>>
  llvm.store %second, %dst : vector<2xbf16>, !llvm.ptr
  llvm.return
}
