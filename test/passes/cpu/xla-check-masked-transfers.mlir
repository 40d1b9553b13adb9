// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-check-masked-transfers)' --split-input-file --verify-diagnostics

/// A masked read that transposes and skips a memref dim (d2): the form
/// convert-vector-to-scf reads the mask of along the wrong dim; an error at it.
func.func @transposes_and_skips(%m: memref<40x16x3x20xf32>, %i: index, %mask: vector<8x16xi1>) -> vector<16x8xf32> {
  %pad = arith.constant 0.0 : f32
  // expected-error @+1 {{internal error in xla-check-masked-transfers: a masked 'vector.transfer_read' with permutation map affine_map<(d0, d1, d2, d3) -> (d3, d1)>}}
  %r = vector.transfer_read %m[%i, %i, %i, %i], %pad, %mask {permutation_map = affine_map<(d0, d1, d2, d3) -> (d3, d1)>} : memref<40x16x3x20xf32>, vector<16x8xf32>
  return %r : vector<16x8xf32>
}

// -----

/// The same read wrapped in vector.mask: an error too.
func.func @wrapped(%m: memref<40x16x3x20xf32>, %i: index, %mask: vector<8x16xi1>) -> vector<16x8xf32> {
  %pad = arith.constant 0.0 : f32
  %r = vector.mask %mask {
    // expected-error @+1 {{internal error in xla-check-masked-transfers}}
    %t = vector.transfer_read %m[%i, %i, %i, %i], %pad {permutation_map = affine_map<(d0, d1, d2, d3) -> (d3, d1)>} : memref<40x16x3x20xf32>, vector<16x8xf32>
    vector.yield %t : vector<16x8xf32>
  } : vector<8x16xi1> -> vector<16x8xf32>
  return %r : vector<16x8xf32>
}

// -----

/// Lowered right, so passed: a permutation of the minor dims, masked; a read
/// in the memref's order that skips a dim, masked; the transposing, skipping
/// read unmasked; a broadcast dim beside minor ones.
func.func @passes(%m: memref<40x16x3x20xf32>, %i: index, %mask: vector<3x20xi1>,
                  %mask2: vector<16x20xi1>, %mask3: vector<20xi1>) {
  %pad = arith.constant 0.0 : f32
  %a = vector.transfer_read %m[%i, %i, %i, %i], %pad, %mask {permutation_map = affine_map<(d0, d1, d2, d3) -> (d3, d2)>} : memref<40x16x3x20xf32>, vector<20x3xf32>
  %b = vector.transfer_read %m[%i, %i, %i, %i], %pad, %mask2 {permutation_map = affine_map<(d0, d1, d2, d3) -> (d1, d3)>} : memref<40x16x3x20xf32>, vector<16x20xf32>
  %c = vector.transfer_read %m[%i, %i, %i, %i], %pad {permutation_map = affine_map<(d0, d1, d2, d3) -> (d3, d1)>} : memref<40x16x3x20xf32>, vector<20x16xf32>
  %d = vector.transfer_read %m[%i, %i, %i, %i], %pad, %mask3 {permutation_map = affine_map<(d0, d1, d2, d3) -> (0, d3)>} : memref<40x16x3x20xf32>, vector<4x20xf32>
  return
}
