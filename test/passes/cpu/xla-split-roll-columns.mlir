// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-split-roll-columns)' --split-input-file | FileCheck %s

/// A roll along the last axis (x[:, 1:] then x[:, :1]) picked per column: the
/// columns [0, 63) read the first slice at the loop's own index, the last
/// column the second slice at (j + 63) - 63 = j; each stretch its own generic,
/// inserted into its slice of the result.
// CHECK-LABEL: func.func @roll
// CHECK-NOT: scf.if
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<8x63xf32>) outs(%{{.*}} : tensor<8x63xf32>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: tensor.extract %{{.*}}[%[[I]], %[[J]]] : tensor<8x63xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 0] [8, 63] [1, 1]
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<8x1xf32>) outs(%{{.*}} : tensor<8x1xf32>)
// CHECK: %[[I2:.*]] = linalg.index 0
// CHECK: %[[J2:.*]] = linalg.index 1
// CHECK: tensor.extract %{{.*}}[%[[I2]], %[[J2]]] : tensor<8x1xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 63] [8, 1] [1, 1]
func.func @roll(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c63 = arith.constant 63 : index
  %a = tensor.extract_slice %x[0, 1] [8, 63] [1, 1] : tensor<8x64xf32> to tensor<8x63xf32>
  %b = tensor.extract_slice %x[0, 0] [8, 1] [1, 1] : tensor<8x64xf32> to tensor<8x1xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%s: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %first = arith.cmpi ult, %j, %c63 : index
    %v = scf.if %first -> (f32) {
      %p = tensor.extract %a[%i, %j] : tensor<8x63xf32>
      scf.yield %p : f32
    } else {
      %k = arith.subi %j, %c63 : index
      %q = tensor.extract %b[%i, %k] : tensor<8x1xf32>
      scf.yield %q : f32
    }
    %m = arith.mulf %v, %s : f32
    linalg.yield %m : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

/// Three operands side by side: the pick nests a branch in a branch; every
/// bound is a cut, so each of the three stretches folds both, the middle one
/// reading its operand at j + 2 - 2 = j.
// CHECK-LABEL: func.func @three
// CHECK-NOT: scf.if
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @three(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>, %c: tensor<4x5xf32>) -> tensor<4x10xf32> {
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %e = tensor.empty() : tensor<4x10xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x10xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %in_a = arith.cmpi ult, %j, %c2 : index
    %v = scf.if %in_a -> (f32) {
      %p = tensor.extract %a[%i, %j] : tensor<4x2xf32>
      scf.yield %p : f32
    } else {
      %in_b = arith.cmpi ult, %j, %c5 : index
      %w = scf.if %in_b -> (f32) {
        %k = arith.subi %j, %c2 : index
        %q = tensor.extract %b[%i, %k] : tensor<4x3xf32>
        scf.yield %q : f32
      } else {
        %k = arith.subi %j, %c5 : index
        %q = tensor.extract %c[%i, %k] : tensor<4x5xf32>
        scf.yield %q : f32
      }
      scf.yield %w : f32
    }
    linalg.yield %v : f32
  } -> tensor<4x10xf32>
  return %r : tensor<4x10xf32>
}

// -----

/// A pick along rows is the same for a whole row: left alone.
// CHECK-LABEL: func.func @rows
// CHECK: linalg.generic
// CHECK: scf.if
// CHECK-NOT: linalg.generic
func.func @rows(%a: tensor<1x8xf32>, %b: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %first = arith.cmpi ult, %i, %c1 : index
    %v = scf.if %first -> (f32) {
      %p = tensor.extract %a[%i, %j] : tensor<1x8xf32>
      scf.yield %p : f32
    } else {
      %k = arith.subi %i, %c1 : index
      %q = tensor.extract %b[%k, %j] : tensor<3x8xf32>
      scf.yield %q : f32
    }
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
