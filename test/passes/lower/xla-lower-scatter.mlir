// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-scatter)' --split-input-file --verify-diagnostics | FileCheck %s

/// Rows added at scattered indices: one loop over the indices; each row is
/// read, combined by the (widened) region and written back as a slice, only
/// when the whole row fits.
// CHECK-LABEL: func.func private @xla_scatter_0
// CHECK-SAME: (%[[IN:.*]]: tensor<5x3xf32>, %[[IDX:.*]]: tensor<2x1xi32>, %[[UP:.*]]: tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[LAST:.*]] = arith.constant 4 : index
// CHECK: %[[LOOP:.*]] = scf.for %[[S:[^ ]+]] = %[[C0]] to {{.*}} iter_args(%[[ACC:[^ ]+]] = %[[IN]]) -> (tensor<5x3xf32>)
// CHECK: %[[X:.*]] = tensor.extract %[[IDX]][%[[S]], %[[C0]]] : tensor<2x1xi32>
// CHECK: %[[START:.*]] = arith.index_cast %[[X]] : i32 to index
// CHECK: %[[LO:.*]] = arith.cmpi sge, %[[START]], %[[C0]]
// CHECK: %[[HI:.*]] = arith.cmpi sle, %[[START]], %[[LAST]]
// CHECK: %[[FITS:.*]] = arith.andi %[[LO]], %[[HI]]
// CHECK: %[[NEW:.*]] = scf.if %[[FITS]] -> (tensor<5x3xf32>)
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[ACC]][%[[START]], 0] [1, 3] [1, 1] : tensor<5x3xf32> to tensor<3xf32>
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[UP]][%[[S]], 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>
// CHECK: %[[SUM:.*]] = stablehlo.add %[[OLD]], %[[ROW]] : tensor<3xf32>
// CHECK: %[[PUT:.*]] = tensor.insert_slice %[[SUM]] into %[[ACC]][%[[START]], 0] [1, 3] [1, 1]
// CHECK: scf.yield %[[PUT]]
// CHECK: else
// CHECK: scf.yield %[[ACC]]
// CHECK: scf.yield %[[NEW]]
// CHECK: return %[[LOOP]]
// CHECK-LABEL: func.func @add_rows
// CHECK-SAME: (%[[OPERAND:.*]]: tensor<5x3xf32>, %[[INDICES:.*]]: tensor<2x1xi32>, %[[UPDATES:.*]]: tensor<2x3xf32>)
// CHECK: %[[R:.*]] = call @xla_scatter_0(%[[OPERAND]], %[[INDICES]], %[[UPDATES]])
// CHECK-NOT: stablehlo.scatter
// CHECK: return %[[R]]
func.func @add_rows(%operand: tensor<5x3xf32>, %indices: tensor<2x1xi32>,
                    %updates: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %r = "stablehlo.scatter"(%operand, %indices, %updates) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %sum = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
    : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

/// Unsigned indices are widened to i64 first (arith reads signless integers
/// only); a constant the region shares with the function is copied in.
// CHECK-LABEL: func.func private @xla_scatter_0
// CHECK-SAME: (%[[IN:.*]]: tensor<4xf32>, %[[IDX:.*]]: tensor<2xui16>, %[[UP:.*]]: tensor<2xf32>)
// CHECK: %[[WIDE:.*]] = stablehlo.convert %[[IDX]] : (tensor<2xui16>) -> tensor<2xi64>
// CHECK: scf.for %[[S:[^ ]+]] = {{.*}} iter_args(%[[ACC:[^ ]+]] = %[[IN]])
// CHECK: tensor.extract %[[WIDE]][%[[S]]] : tensor<2xi64>
// CHECK: %[[Y:.*]] = tensor.extract_slice %[[UP]][%[[S]]] [1] [1] : tensor<2xf32> to tensor<f32>
// CHECK: %[[TWO:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[M:.*]] = stablehlo.multiply %[[Y]], %[[TWO]] : tensor<f32>
// CHECK: tensor.insert_slice %[[M]] into %[[ACC]]
func.func @shared_constant(%operand: tensor<4xf32>, %indices: tensor<2xui16>,
                           %updates: tensor<2xf32>) -> tensor<4xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %r = "stablehlo.scatter"(%operand, %indices, %updates) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.multiply %y, %two : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
    : (tensor<4xf32>, tensor<2xui16>, tensor<2xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

/// A region that is not elementwise (here: control flow) runs one element at
/// a time, in a loop over the window inside the bounds check.
// CHECK-LABEL: func.func private @xla_scatter_0
// CHECK: scf.for %[[S:[^ ]+]] = {{.*}} -> (tensor<5x3xf32>)
// CHECK: scf.if {{.*}} -> (tensor<5x3xf32>)
// CHECK: scf.for %[[W:[^ ]+]] = {{.*}} iter_args(%[[ACC:[^ ]+]] = {{.*}}) -> (tensor<5x3xf32>)
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[ACC]][%{{.*}}, %[[W]]] [1, 1] [1, 1] : tensor<5x3xf32> to tensor<f32>
// CHECK: %[[NEW:.*]] = "stablehlo.if"
// CHECK: tensor.insert_slice %[[NEW]] into %[[ACC]]
func.func @per_element(%operand: tensor<5x3xf32>, %indices: tensor<4x1xi32>,
                       %updates: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %r = "stablehlo.scatter"(%operand, %indices, %updates) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %p = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %z = "stablehlo.if"(%p) ({
      %s = stablehlo.subtract %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }, {
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    stablehlo.return %z : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
    : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

/// Two operands scattered together: both results travel in the iter_args.
// CHECK-LABEL: func.func private @xla_scatter_0
// CHECK-SAME: (%[[K:.*]]: tensor<4xf32>, %[[V:.*]]: tensor<4xi32>, %{{.*}}: tensor<3x1xi32>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3xi32>)
// CHECK: %[[LOOP:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[K]], %{{.*}} = %[[V]]) -> (tensor<4xf32>, tensor<4xi32>)
// CHECK: stablehlo.select
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1
// CHECK-LABEL: func.func @pair
// CHECK: %[[R:.*]]:2 = call @xla_scatter_0
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @pair(%keys: tensor<4xf32>, %values: tensor<4xi32>, %indices: tensor<3x1xi32>,
                %new_keys: tensor<3xf32>, %new_values: tensor<3xi32>)
    -> (tensor<4xf32>, tensor<4xi32>) {
  %r:2 = "stablehlo.scatter"(%keys, %values, %indices, %new_keys, %new_values) ({
  ^bb0(%k: tensor<f32>, %v: tensor<i32>, %nk: tensor<f32>, %nv: tensor<i32>):
    %gt = stablehlo.compare GT, %nk, %k : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %kk = stablehlo.select %gt, %nk, %k : tensor<i1>, tensor<f32>
    %vv = stablehlo.select %gt, %nv, %v : tensor<i1>, tensor<i32>
    stablehlo.return %kk, %vv : tensor<f32>, tensor<i32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
    : (tensor<4xf32>, tensor<4xi32>, tensor<3x1xi32>, tensor<3xf32>, tensor<3xi32>)
    -> (tensor<4xf32>, tensor<4xi32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi32>
}

// -----

/// A batching dimension of the operand is walked by the scatter loop of the
/// matching indices dimension; only the scattered dimension is checked.
// CHECK-LABEL: func.func private @xla_scatter_0
// CHECK: scf.for %[[B:[^ ]+]] = {{.*}} -> (tensor<2x6x3xi64>)
// CHECK: scf.for %[[S:[^ ]+]] = {{.*}} iter_args(%[[ACC:[^ ]+]] = {{.*}}) -> (tensor<2x6x3xi64>)
// CHECK: %[[X:.*]] = tensor.extract %{{.*}}[%[[B]], %[[S]], %{{.*}}] : tensor<2x4x1xi8>
// CHECK: %[[START:.*]] = arith.index_cast %[[X]] : i8 to index
// CHECK: %[[ROW:.*]] = tensor.extract_slice %{{.*}}[%[[B]], %[[S]], 0] [1, 1, 3]
// CHECK: tensor.insert_slice %[[ROW]] into %[[ACC]][%[[B]], %[[START]], 0] [1, 1, 3]
func.func @batched(%operand: tensor<2x6x3xi64>, %indices: tensor<2x4x1xi8>,
                   %updates: tensor<2x4x3xi64>) -> tensor<2x6x3xi64> {
  %r = "stablehlo.scatter"(%operand, %indices, %updates) ({
  ^bb0(%x: tensor<i64>, %y: tensor<i64>):
    stablehlo.return %y : tensor<i64>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2],
      inserted_window_dims = [1], input_batching_dims = [0],
      scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1],
      index_vector_dim = 2>}
    : (tensor<2x6x3xi64>, tensor<2x4x1xi8>, tensor<2x4x3xi64>) -> tensor<2x6x3xi64>
  return %r : tensor<2x6x3xi64>
}

// -----

/// An embedding bag: sorted segment ids (indices_are_sorted), the updates a
/// gather of table rows times a per-row weight. Chunks of the ids run in
/// parallel, each from the start of a run of equal ids; each update row is
/// computed where it is added (the table row sliced at its clamped id, the
/// ids read from their own kernel), so the gather and multiply go. The
/// segment ids are read from the 1-d tensor broadcast to [32, 1].
// CHECK-LABEL: func.func private @xla_scatter_0(
// CHECK-SAME: %[[OPERAND:.*]]: tensor<10x8xf32>, %[[SEGMENTS:.*]]: tensor<32xi32>, %[[TABLE:.*]]: tensor<100x8xf32>, %[[IDS:.*]]: tensor<32x1xi32>, %[[W:.*]]: tensor<32xf32>)
// CHECK: scf.forall (%[[TASK:.*]]) in (1) shared_outs(%[[OUT:.*]] = %[[OPERAND]])
// CHECK: %[[LO:.*]] = func.call @xla_scatter_0_run_start(%[[SEGMENTS]]
// CHECK: %[[HI:.*]] = func.call @xla_scatter_0_run_start(%[[SEGMENTS]]
// CHECK: %[[MINE:.*]] = tensor.extract_slice %[[OUT]]
// CHECK: scf.for %[[I:.*]] = %[[LO]] to %[[HI]] {{.*}} iter_args(%[[ACC:.*]] = %[[MINE]]) -> (tensor<?x8xf32>)
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[ACC]][%[[AT:.*]], 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<8xf32>
// CHECK-DAG: tensor.extract_slice %[[W]][%[[I]]] [1] [1] : tensor<32xf32> to tensor<f32>
// CHECK-DAG: tensor.extract_slice %[[IDS]][%[[I]], 0] [1, 1] [1, 1] : tensor<32x1xi32> to tensor<1xi32>
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[TABLE]][%{{.*}}, 0] [1, 8] [1, 1] : tensor<100x8xf32> to tensor<8xf32>
// CHECK: %[[PRODUCT:.*]] = stablehlo.multiply %[[ROW]], %{{.*}} : tensor<8xf32>
// CHECK: %[[SUM:.*]] = stablehlo.add %[[OLD]], %[[PRODUCT]] : tensor<8xf32>
// CHECK: tensor.insert_slice %[[SUM]] into %[[ACC]][%[[AT]], 0] [1, 8] [1, 1]
// CHECK: tensor.parallel_insert_slice
// CHECK-LABEL: func.func private @xla_scatter_0_run_start
// CHECK: scf.while
// CHECK-LABEL: func.func @embedding_bag
// CHECK-NOT: stablehlo.gather
// CHECK-NOT: stablehlo.multiply
// CHECK: call @xla_scatter_0(%{{.*}}, %arg3, %arg0, %{{.*}}, %arg2)
func.func @embedding_bag(%table: tensor<100x8xf32>, %ids: tensor<32xi32>, %w: tensor<32xf32>,
                         %segments: tensor<32xi32>) -> tensor<10x8xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<10x8xf32>
  %0 = stablehlo.broadcast_in_dim %ids, dims = [0] : (tensor<32xi32>) -> tensor<32x1xi32>
  %1 = "stablehlo.gather"(%table, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
      slice_sizes = array<i64: 1, 8>}> : (tensor<100x8xf32>, tensor<32x1xi32>) -> tensor<32x8xf32>
  %2 = stablehlo.broadcast_in_dim %w, dims = [0] : (tensor<32xf32>) -> tensor<32x8xf32>
  %3 = stablehlo.multiply %1, %2 : tensor<32x8xf32>
  %4 = stablehlo.broadcast_in_dim %segments, dims = [0] : (tensor<32xi32>) -> tensor<32x1xi32>
  %r = "stablehlo.scatter"(%zero, %4, %3) <{indices_are_sorted = true,
      scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<10x8xf32>, tensor<32x1xi32>, tensor<32x8xf32>) -> tensor<10x8xf32>
  return %r : tensor<10x8xf32>
}

// -----

/// Columns (x.at[:, i].add(u)): the windows span the leading dim, so chunks of
/// the operand's rows run in parallel, each row's scatter (@..._row, the
/// one-window-at-a-time loop on the row and the updates' row) in turn.
// CHECK-LABEL: func.func private @xla_scatter_0(
// CHECK-SAME: %[[IN:[^:]*]]: tensor<4x5xf32>, %[[IDX:[^:]*]]: tensor<3x1xi32>, %[[UP:[^:]*]]: tensor<4x3xf32>
// CHECK: scf.forall (%[[TASK:.*]]) in (1) shared_outs(%[[OUT:.*]] = %[[IN]])
// CHECK: %[[MINE:.*]] = tensor.extract_slice %[[OUT]]
// CHECK: scf.for %[[K:[^ ]+]] = {{.*}} iter_args(%[[ACC:[^ ]+]] = %[[MINE]]) -> (tensor<4x5xf32>)
// CHECK: %[[AT:.*]] = arith.addi {{.*}}, %[[K]]
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[ACC]][%[[K]], 0] [1, 5] [1, 1] : tensor<4x5xf32> to tensor<5xf32>
// CHECK: %[[UROW:.*]] = tensor.extract_slice %[[UP]][%[[AT]], 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
// CHECK: %[[NEW:.*]] = func.call @xla_scatter_0_row(%[[ROW]], %[[IDX]], %[[UROW]])
// CHECK: tensor.insert_slice %[[NEW]] into %[[ACC]][%[[K]], 0] [1, 5] [1, 1]
// CHECK: tensor.parallel_insert_slice
// CHECK-LABEL: func.func private @xla_scatter_0_row(
// CHECK-SAME: tensor<5xf32>, %{{.*}}: tensor<3x1xi32>, %{{.*}}: tensor<3xf32>) -> tensor<5xf32>
// CHECK: scf.for
// CHECK: arith.cmpi sle, %{{.*}}, %c4
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}] [1] [1] : tensor<5xf32> to tensor<f32>
// CHECK-LABEL: func.func @add_columns
// CHECK: call @xla_scatter_0(
func.func @add_columns(%x: tensor<4x5xf32>, %i: tensor<3x1xi32>, %u: tensor<4x3xf32>) -> tensor<4x5xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0],
      inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>}
     : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<4x3xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

/// A region that reads a non-constant value from outside is reported.
func.func @captured_argument(%operand: tensor<4xf32>, %indices: tensor<2xi32>,
                             %updates: tensor<2xf32>, %scale: tensor<f32>) -> tensor<4xf32> {
  %r = "stablehlo.scatter"(%operand, %indices, %updates) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    // expected-error @+1 {{uses a value defined outside it; only constants are supported}}
    %m = stablehlo.multiply %y, %scale : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
    : (tensor<4xf32>, tensor<2xi32>, tensor<2xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
