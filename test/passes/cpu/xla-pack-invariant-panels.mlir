// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-pack-invariant-panels)' --split-input-file | FileCheck %s

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#column = affine_map<(d0)[s0] -> (d0 * 128 + s0)>

/// An LSTM step's gate product in a loop that never writes B: B is packed
/// once before the loop into 8-column panels, and the kernel's copy reads
/// B[k, c:c+8] at panel row (c floordiv 8) * 256 + k. Two calls on B in the
/// loop read the same panels.
// CHECK: #[[$PANEL:.*]] = affine_map<(d0) -> ((d0 floordiv 8) * 256)>
// CHECK-LABEL: func.func @scan
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32768x8xf32>
// CHECK-NEXT: call @xla_scheduled_panels_256x1024x8(%arg1, %[[P]])
// CHECK-NEXT: scf.for
// CHECK-NEXT: func.call @xla_scheduled_0_panels(%arg0, %[[P]], %arg2)
// CHECK-NEXT: func.call @xla_scheduled_0_panels(%arg0, %[[P]], %arg2)
// CHECK-NOT: xla_scheduled_panels_256x1024x8(
// CHECK: memref.dealloc %[[P]]
// CHECK-LABEL: func.func private @xla_scheduled_0(
// CHECK-LABEL: func.func private @xla_scheduled_0_panels(%arg0: memref<8x256xf32>, %arg1: memref<32768x8xf32>
// CHECK: %[[COL:.*]] = affine.apply #{{.*}}(%arg3)[%arg4]
// CHECK-NEXT: %[[AT:.*]] = affine.apply #[[$PANEL]](%[[COL]])
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %arg5, %[[AT]]
// CHECK: vector.transfer_read %arg1[%[[ROW]], %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<32768x8xf32>, vector<8xf32>
// CHECK-LABEL: func.func private @xla_scheduled_panels_256x1024x8
func.func @scan(%h: memref<8x256xf32>, %w: memref<256x1024xf32>, %out: memref<8x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    func.call @xla_scheduled_0(%h, %w, %out) : (memref<8x256xf32>, memref<256x1024xf32>, memref<8x1024xf32>) -> ()
    func.call @xla_scheduled_0(%h, %w, %out) : (memref<8x256xf32>, memref<256x1024xf32>, memref<8x1024xf32>) -> ()
  }
  return
}
func.func private @xla_scheduled_0(%arg0: memref<8x256xf32>, %arg1: memref<256x1024xf32>, %arg2: memref<8x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : vector<8x8xf32>
  scf.forall (%t) in (8) {
    scf.for %j = %c0 to %c128 step %c8 {
      %acc = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<8x8xf32>) {
        %a = vector.transfer_read %arg0[%c0, %k], %zero {in_bounds = [true, true]} : memref<8x256xf32>, vector<8x1xf32>
        %col = affine.apply #column(%t)[%j]
        %row = vector.transfer_read %arg1[%k, %col], %zero {in_bounds = [true]} : memref<256x1024xf32>, vector<8xf32>
        %b = vector.shape_cast %row : vector<8xf32> to vector<1x8xf32>
        %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
        scf.yield %s : vector<8x8xf32>
      }
      %col = affine.apply #column(%t)[%j]
      vector.transfer_write %acc, %arg2[%c0, %col] {in_bounds = [true, true]} : vector<8x8xf32>, memref<8x1024xf32>
    }
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

/// The loop writes B (a copy into it each step): read in place. A column
/// offset that is no multiple of the width (%j + 4) would also keep it.
// CHECK-LABEL: func.func @written
// CHECK-NOT: panels
func.func @written(%h: memref<8x256xf32>, %w: memref<256x1024xf32>, %next: memref<256x1024xf32>, %out: memref<8x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    func.call @xla_scheduled_0(%h, %w, %out) : (memref<8x256xf32>, memref<256x1024xf32>, memref<8x1024xf32>) -> ()
    memref.copy %next, %w : memref<256x1024xf32> to memref<256x1024xf32>
  }
  return
}
func.func private @xla_scheduled_0(%arg0: memref<8x256xf32>, %arg1: memref<256x1024xf32>, %arg2: memref<8x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : vector<8x8xf32>
  scf.for %j = %c0 to %c1024 step %c8 {
    %acc = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<8x8xf32>) {
      %a = vector.transfer_read %arg0[%c0, %k], %zero {in_bounds = [true, true]} : memref<8x256xf32>, vector<8x1xf32>
      %row = vector.transfer_read %arg1[%k, %j], %zero {in_bounds = [true]} : memref<256x1024xf32>, vector<8xf32>
      %b = vector.shape_cast %row : vector<8xf32> to vector<1x8xf32>
      %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
      scf.yield %s : vector<8x8xf32>
    }
    vector.transfer_write %acc, %arg2[%c0, %j] {in_bounds = [true, true]} : vector<8x8xf32>, memref<8x1024xf32>
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#column = affine_map<(d0)[s0] -> (d0 * 128 + s0)>

/// Straight-line code (torch_lstm's unrolled steps, each kernel back in
/// place): kernels in a row reading one unwritten B read panels packed once
/// before the first, freed after the last. A copy into B ends the run: the
/// kernels after it read panels packed anew; a lone kernel reads B in place.
// CHECK-LABEL: func.func @steps
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32768x8xf32>
// CHECK-NEXT: call @xla_scheduled_panels_256x1024x8(%arg1, %[[P]])
// CHECK-NEXT: scf.forall
// CHECK: vector.transfer_read %[[P]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<32768x8xf32>, vector<8xf32>
// CHECK: scf.forall
// CHECK: vector.transfer_read %[[P]][
// CHECK: memref.dealloc %[[P]]
// CHECK-NEXT: memref.copy %arg2, %arg1
// CHECK-NEXT: %[[Q:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32768x8xf32>
// CHECK-NEXT: call @xla_scheduled_panels_256x1024x8(%arg1, %[[Q]])
// CHECK: vector.transfer_read %[[Q]][
// CHECK: vector.transfer_read %[[Q]][
// CHECK: memref.dealloc %[[Q]]
// CHECK-NEXT: memref.copy %arg2, %arg1
// CHECK-NEXT: scf.forall
// CHECK: vector.transfer_read %arg1[
// CHECK: return
func.func @steps(%h: memref<8x256xf32>, %w: memref<256x1024xf32>, %next: memref<256x1024xf32>, %out: memref<8x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : vector<8x8xf32>
  scf.forall (%t) in (8) {
    scf.for %j = %c0 to %c128 step %c8 {
      %acc = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<8x8xf32>) {
        %a = vector.transfer_read %h[%c0, %k], %zero {in_bounds = [true, true]} : memref<8x256xf32>, vector<8x1xf32>
        %col = affine.apply #column(%t)[%j]
        %row = vector.transfer_read %w[%k, %col], %zero {in_bounds = [true]} : memref<256x1024xf32>, vector<8xf32>
        %b = vector.shape_cast %row : vector<8xf32> to vector<1x8xf32>
        %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
        scf.yield %s : vector<8x8xf32>
      }
      %col = affine.apply #column(%t)[%j]
      vector.transfer_write %acc, %out[%c0, %col] {in_bounds = [true, true]} : vector<8x8xf32>, memref<8x1024xf32>
    }
  }
  scf.forall (%t) in (8) {
    scf.for %j = %c0 to %c128 step %c8 {
      %acc = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<8x8xf32>) {
        %a = vector.transfer_read %h[%c0, %k], %zero {in_bounds = [true, true]} : memref<8x256xf32>, vector<8x1xf32>
        %col = affine.apply #column(%t)[%j]
        %row = vector.transfer_read %w[%k, %col], %zero {in_bounds = [true]} : memref<256x1024xf32>, vector<8xf32>
        %b = vector.shape_cast %row : vector<8xf32> to vector<1x8xf32>
        %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
        scf.yield %s : vector<8x8xf32>
      }
      %col = affine.apply #column(%t)[%j]
      vector.transfer_write %acc, %out[%c0, %col] {in_bounds = [true, true]} : vector<8x8xf32>, memref<8x1024xf32>
    }
  }
  memref.copy %next, %w : memref<256x1024xf32> to memref<256x1024xf32>
  scf.forall (%t) in (8) {
    scf.for %j = %c0 to %c128 step %c8 {
      %acc = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<8x8xf32>) {
        %a = vector.transfer_read %h[%c0, %k], %zero {in_bounds = [true, true]} : memref<8x256xf32>, vector<8x1xf32>
        %col = affine.apply #column(%t)[%j]
        %row = vector.transfer_read %w[%k, %col], %zero {in_bounds = [true]} : memref<256x1024xf32>, vector<8xf32>
        %b = vector.shape_cast %row : vector<8xf32> to vector<1x8xf32>
        %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
        scf.yield %s : vector<8x8xf32>
      }
      %col = affine.apply #column(%t)[%j]
      vector.transfer_write %acc, %out[%c0, %col] {in_bounds = [true, true]} : vector<8x8xf32>, memref<8x1024xf32>
    }
  }
  scf.forall (%t) in (8) {
    scf.for %j = %c0 to %c128 step %c8 {
      %acc = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<8x8xf32>) {
        %a = vector.transfer_read %h[%c0, %k], %zero {in_bounds = [true, true]} : memref<8x256xf32>, vector<8x1xf32>
        %col = affine.apply #column(%t)[%j]
        %row = vector.transfer_read %w[%k, %col], %zero {in_bounds = [true]} : memref<256x1024xf32>, vector<8xf32>
        %b = vector.shape_cast %row : vector<8xf32> to vector<1x8xf32>
        %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
        scf.yield %s : vector<8x8xf32>
      }
      %col = affine.apply #column(%t)[%j]
      vector.transfer_write %acc, %out[%c0, %col] {in_bounds = [true, true]} : vector<8x8xf32>, memref<8x1024xf32>
    }
  }
  memref.copy %next, %w : memref<256x1024xf32> to memref<256x1024xf32>
  scf.forall (%t) in (8) {
    scf.for %j = %c0 to %c128 step %c8 {
      %acc = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<8x8xf32>) {
        %a = vector.transfer_read %h[%c0, %k], %zero {in_bounds = [true, true]} : memref<8x256xf32>, vector<8x1xf32>
        %col = affine.apply #column(%t)[%j]
        %row = vector.transfer_read %w[%k, %col], %zero {in_bounds = [true]} : memref<256x1024xf32>, vector<8xf32>
        %b = vector.shape_cast %row : vector<8xf32> to vector<1x8xf32>
        %s = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
        scf.yield %s : vector<8x8xf32>
      }
      %col = affine.apply #column(%t)[%j]
      vector.transfer_write %acc, %out[%c0, %col] {in_bounds = [true, true]} : vector<8x8xf32>, memref<8x1024xf32>
    }
  }
  return
}
