// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-update-windows-in-place)' --split-input-file | FileCheck %s

#id = affine_map<(d0) -> (d0)>

/// A scatter-add's window: read, combined with the update and written back
/// at the same place. The window becomes the generic's init, read through
/// the output argument; the empty is no longer written.
// CHECK-LABEL: func.func @segment_row
// CHECK: %[[OLD:.*]] = tensor.extract_slice %arg0[%arg2, 0] [1, 64] [1, 1]
// CHECK: %[[UPD:.*]] = tensor.extract_slice %arg1
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[UPD]] : tensor<64xf32>) outs(%[[OLD]] : tensor<64xf32>)
// CHECK-SAME: xla.fusion_group = 3
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: arith.addf %[[OUT]], %[[IN]] : f32
// CHECK: tensor.insert_slice %[[NEW]] into %arg0[%arg2, 0] [1, 64] [1, 1]
func.func @segment_row(%acc: tensor<512x64xf32>, %upd: tensor<16x64xf32>, %i: index, %j: index) -> tensor<512x64xf32> {
  %old = tensor.extract_slice %acc[%i, 0] [1, 64] [1, 1] : tensor<512x64xf32> to tensor<64xf32>
  %u = tensor.extract_slice %upd[%j, 0] [1, 64] [1, 1] : tensor<16x64xf32> to tensor<64xf32>
  %e = tensor.empty() : tensor<64xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%old, %u : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) attrs = {xla.fusion_group = 3 : i64} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %r = tensor.insert_slice %new into %acc[%i, 0] [1, 64] [1, 1] : tensor<64xf32> into tensor<512x64xf32>
  return %r : tensor<512x64xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// Written back somewhere else (row %j, not %i): the generic is left alone.
// CHECK-LABEL: func.func @other_row
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<64xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
func.func @other_row(%acc: tensor<512x64xf32>, %upd: tensor<16x64xf32>, %i: index, %j: index) -> tensor<512x64xf32> {
  %old = tensor.extract_slice %acc[%i, 0] [1, 64] [1, 1] : tensor<512x64xf32> to tensor<64xf32>
  %u = tensor.extract_slice %upd[%j, 0] [1, 64] [1, 1] : tensor<16x64xf32> to tensor<64xf32>
  %e = tensor.empty() : tensor<64xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%old, %u : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %r = tensor.insert_slice %new into %acc[%j, 0] [1, 64] [1, 1] : tensor<64xf32> into tensor<512x64xf32>
  return %r : tensor<512x64xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// The old window is read again after the write: it must stay a copy.
// CHECK-LABEL: func.func @window_read_again
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<64xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
func.func @window_read_again(%acc: tensor<512x64xf32>, %upd: tensor<16x64xf32>, %i: index, %j: index) -> (tensor<512x64xf32>, tensor<64xf32>) {
  %old = tensor.extract_slice %acc[%i, 0] [1, 64] [1, 1] : tensor<512x64xf32> to tensor<64xf32>
  %u = tensor.extract_slice %upd[%j, 0] [1, 64] [1, 1] : tensor<16x64xf32> to tensor<64xf32>
  %e = tensor.empty() : tensor<64xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%old, %u : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %r = tensor.insert_slice %new into %acc[%i, 0] [1, 64] [1, 1] : tensor<64xf32> into tensor<512x64xf32>
  return %r, %old : tensor<512x64xf32>, tensor<64xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

/// An embedding bag's row: the window plus a table row times a weight read
/// once for the whole row. Only the window and the output need to be read
/// and written element for element: the window becomes the init.
// CHECK-LABEL: func.func @weighted_row
// CHECK: %[[OLD:.*]] = tensor.extract_slice %arg0[%arg3, 0] [1, 64] [1, 1]
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %arg2 : tensor<64xf32>, tensor<f32>) outs(%[[OLD]] : tensor<64xf32>)
// CHECK: tensor.insert_slice %[[NEW]] into %arg0[%arg3, 0] [1, 64] [1, 1]
func.func @weighted_row(%acc: tensor<512x64xf32>, %table: tensor<100x64xf32>, %w: tensor<f32>, %i: index, %j: index) -> tensor<512x64xf32> {
  %old = tensor.extract_slice %acc[%i, 0] [1, 64] [1, 1] : tensor<512x64xf32> to tensor<64xf32>
  %row = tensor.extract_slice %table[%j, 0] [1, 64] [1, 1] : tensor<100x64xf32> to tensor<64xf32>
  %e = tensor.empty() : tensor<64xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #scalar, #id], iterator_types = ["parallel"]}
      ins(%old, %row, %w : tensor<64xf32>, tensor<64xf32>, tensor<f32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32):
    %p = arith.mulf %b, %c : f32
    %s = arith.addf %a, %p : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %r = tensor.insert_slice %new into %acc[%i, 0] [1, 64] [1, 1] : tensor<64xf32> into tensor<512x64xf32>
  return %r : tensor<512x64xf32>
}
