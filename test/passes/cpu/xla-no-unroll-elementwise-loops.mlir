// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-no-unroll-elementwise-loops)' | FileCheck %s

// CHECK: #[[$UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[$ROLLED:.*]] = #llvm.loop_annotation<unroll = #[[$UNROLL]]>

/// An elementwise kernel (a residual add, rows of 16-lane vectors): both loops rolled.
// CHECK-LABEL: func.func @residual_add
// CHECK: vector.transfer_write
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ROLLED]]}
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ROLLED]]}
func.func @residual_add(%a: memref<197x192xf32>, %b: memref<197x192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c192 = arith.constant 192 : index
  %c197 = arith.constant 197 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c197 step %c1 {
    scf.for %j = %c0 to %c192 step %c16 {
      %x = vector.transfer_read %a[%i, %j], %pad {in_bounds = [true]} : memref<197x192xf32>, vector<16xf32>
      %y = vector.transfer_read %b[%i, %j], %pad {in_bounds = [true]} : memref<197x192xf32>, vector<16xf32>
      %s = arith.addf %x, %y : vector<16xf32>
      vector.transfer_write %s, %b[%i, %j] {in_bounds = [true]} : vector<16xf32>, memref<197x192xf32>
    }
  }
  return
}

/// A register-tile kernel (any vector.fma): its loops, packing copies among
/// them, are left to LLVM.
// CHECK-LABEL: func.func @with_a_tile
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func @with_a_tile(%a: memref<8x64xf32>, %b: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = vector.transfer_read %a[%i, %c0], %pad {in_bounds = [true]} : memref<8x64xf32>, vector<64xf32>
    vector.transfer_write %x, %b[%i, %c0] {in_bounds = [true]} : vector<64xf32>, memref<8x64xf32>
  }
  %v = vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true]} : memref<8x64xf32>, vector<64xf32>
  %f = vector.fma %v, %v, %v : vector<64xf32>
  vector.transfer_write %f, %b[%c0, %c0] {in_bounds = [true]} : vector<64xf32>, memref<8x64xf32>
  return
}

/// A loop that carries a vector (an accumulator, or lanes gathered one by
/// one) and a scalar loop (LLVM's vectorizer takes it) are left to LLVM.
// CHECK-LABEL: func.func @carried_and_scalar
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func @carried_and_scalar(%a: memref<16x16xf32>, %b: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (vector<16xf32>) {
    %x = vector.transfer_read %a[%i, %c0], %pad {in_bounds = [true]} : memref<16x16xf32>, vector<16xf32>
    %s = arith.addf %acc, %x : vector<16xf32>
    scf.yield %s : vector<16xf32>
  }
  vector.transfer_write %sum, %b[%c0] {in_bounds = [true]} : vector<16xf32>, memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i, %i] : memref<16x16xf32>
    memref.store %x, %b[%i] : memref<16xf32>
  }
  return
}

/// A walk whose bounds are data (a sorted scatter's chunk) and the row of 4
/// vectors inside it: left to LLVM, so more rows' loads are in flight; the
/// same row in a loop of static bounds stays rolled.
// CHECK-LABEL: func.func @row_in_a_data_walk
// CHECK: scf.for %{{.*}} = %arg2 to %arg3
// CHECK-NEXT: scf.for
// CHECK-NEXT: vector.transfer_read
// CHECK-NEXT: vector.transfer_write
// CHECK-NEXT: }{{$}}
// CHECK-NEXT: }{{$}}
// CHECK: scf.for %{{.*}} = %c0 to %c16
// CHECK-NEXT: scf.for
// CHECK-NEXT: vector.transfer_read
// CHECK-NEXT: vector.transfer_write
// CHECK-NEXT: } {llvm.loop_annotation
func.func @row_in_a_data_walk(%rows: memref<16x64xf32>, %acc: memref<64xf32>, %lo: index, %hi: index) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %lo to %hi step %c1 {
    scf.for %j = %c0 to %c64 step %c16 {
      %v = vector.transfer_read %rows[%i, %j], %pad {in_bounds = [true]} : memref<16x64xf32>, vector<16xf32>
      vector.transfer_write %v, %acc[%j] {in_bounds = [true]} : vector<16xf32>, memref<64xf32>
    }
  }
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c64 step %c16 {
      %v = vector.transfer_read %rows[%i, %j], %pad {in_bounds = [true]} : memref<16x64xf32>, vector<16xf32>
      vector.transfer_write %v, %acc[%j] {in_bounds = [true]} : vector<16xf32>, memref<64xf32>
    }
  }
  return
}
