// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=1 vector-bytes=64})' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=64})' --split-input-file | FileCheck %s --check-prefix=TWO

/// AVX-512 (8 x 32 tiles), k up to 1024: all of k in one packed block of B,
/// as many columns as keep it within 512 KiB (1024 x 128), copied whole, then
/// row tiles outside column tiles, each tile's k loop over all 1024 steps:
/// C read and written once, not once per 256-deep block. Only where a
/// chunk has 32 row tiles or more to read each block: two threads' chunks
/// of 128 rows keep the 256 x 32 panels (in L1 while 16 row tiles go by).
// CHECK-LABEL: func.func @square
// CHECK-NOT: scf.forall
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C128:.*]] iter_args
// CHECK: %[[BLOCK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1024x128xf32>
// CHECK: vector.transfer_write {{.*}} : vector<32xf32>, memref<1x32xf32
// CHECK: %[[PACKED:.*]] = bufferization.to_tensor %[[BLOCK]]
// CHECK: scf.for %{{.*}} step %[[C8:.*]] iter_args
// CHECK-NEXT: scf.for %{{.*}} step %[[C32:.*]] iter_args
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C1024:.*]] step %{{.*}} iter_args(%{{.*}}) -> (vector<8x32xf32>)
// CHECK: vector.transfer_read %[[PACKED]]{{.*}} vector<32xf32>
// CHECK: vector.contract {{.*}} into vector<8x32xf32>
// TWO-LABEL: func.func @square
// TWO: scf.forall (%{{.*}}) in (8)
// TWO: memref.alloc() {alignment = 64 : i64} : memref<256x32xf32>
// TWO-NOT: memref<1024x128xf32>
// TWO: vector.contract {{.*}} into vector<8x32xf32>
func.func @square(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

// -----

/// k beyond 1024: AVX-512 keeps its 256 x 256 blocks, each 256 x 32 panel of
/// B packed on its own and read by the row tiles inside its column tile.
// CHECK-LABEL: func.func @deep
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<256x32xf32>
// CHECK: vector.contract {{.*}} into vector<8x32xf32>
// CHECK-NOT: memref<1280x
// TWO-LABEL: func.func @deep
// TWO: scf.forall (%{{.*}}) in (8)
// TWO: memref.alloc() {alignment = 64 : i64} : memref<256x32xf32>
func.func @deep(%a: tensor<128x1280xf32>, %b: tensor<1280x1024xf32>) -> tensor<128x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x1024xf32>) -> tensor<128x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x1280xf32>, tensor<1280x1024xf32>) outs(%c : tensor<128x1024xf32>) -> tensor<128x1024xf32>
  return %r : tensor<128x1024xf32>
}

// -----

/// 960 columns: no block of four tiles or more (128, 160, ...) both divides
/// them and keeps 960 x n within 512 KiB: the 256-style panels stay.
// CHECK-LABEL: func.func @no_whole_block
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<240x32xf32>
// CHECK-NOT: memref<960x
func.func @no_whole_block(%a: tensor<960x960xf32>, %b: tensor<960x960xf32>) -> tensor<960x960xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<960x960xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<960x960xf32>) -> tensor<960x960xf32>
  %r = linalg.matmul ins(%a, %b : tensor<960x960xf32>, tensor<960x960xf32>) outs(%c : tensor<960x960xf32>) -> tensor<960x960xf32>
  return %r : tensor<960x960xf32>
}

// -----

/// 256 rows (32 tiles of 8): two threads take chunks of 128 columns, each one
/// whole-k block of B read by all the row tiles.
// TWO-LABEL: func.func @wide
// TWO: scf.forall (%{{.*}}) in (8)
// TWO: memref.alloc() {alignment = 64 : i64} : memref<1024x128xf32>
// TWO: scf.for %{{.*}} step %{{.*}} iter_args
// TWO-NEXT: scf.for %{{.*}} step %{{.*}} iter_args
// TWO: vector.contract {{.*}} into vector<8x32xf32>
func.func @wide(%a: tensor<256x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<256x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<256x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x1024xf32>, tensor<1024x1024xf32>) outs(%c : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}
