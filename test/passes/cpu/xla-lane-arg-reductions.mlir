// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lane-arg-reductions)' | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lane-arg-reductions{row-pairs=2})' | FileCheck %s --check-prefix=PAIRS

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#mid = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#mid_out = affine_map<(d0, d1, d2) -> (d0, d1)>

/// jax's argmax over rows, its maxima in a buffer nothing reads: a loop over
/// the rows, 16 lanes a step, the masked tail, 4 halvings of the lanes.
// CHECK-LABEL: func.func @argmax_rows
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xi64>)
// CHECK: vector.load {{.*}} vector<16xf32>
// CHECK: arith.cmpf ogt, {{.*}} : vector<16xf32>
// CHECK: arith.cmpf une
// CHECK: scf.yield {{.*}} : vector<16xf32>, vector<16xi64>
// CHECK: vector.create_mask
// CHECK: vector.maskedload
// CHECK-COUNT-4: vector.shuffle {{.*}} : vector<16xi64>, vector<16xi64>
// CHECK: memref.store {{.*}} : memref<?xf32>
// CHECK: memref.store {{.*}} : memref<?xi64>
func.func @argmax_rows(%x: memref<?x100xf32>, %out: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x100xf32>
  %v = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x100xf32>) outs(%v, %out : memref<?xf32>, memref<?xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %0 = linalg.index 1 : index
    %1 = arith.index_cast %0 : index to i64
    %2 = arith.cmpf ogt, %acc, %in : f32
    %3 = arith.cmpf une, %acc, %acc : f32
    %4 = arith.ori %2, %3 : i1
    %5 = arith.cmpf oeq, %acc, %in : f32
    %6 = arith.cmpi slt, %idx, %1 : i64
    %7 = arith.andi %5, %6 : i1
    %8 = arith.ori %4, %7 : i1
    %9 = arith.select %4, %acc, %in : f32
    %10 = arith.select %8, %idx, %1 : i64
    linalg.yield %9, %10 : f32, i64
  }
  memref.dealloc %v : memref<?xf32>
  return
}

/// The maxima go to the caller: on a -0.0/+0.0 tie their sign depends on the
/// order of the combines, so the scalar loops stay.
// CHECK-LABEL: func.func @maxima_read
// CHECK: linalg.generic
func.func @maxima_read(%x: memref<8x100xf32>, %v: memref<8xf32>, %out: memref<8xi64>) {
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf32>) outs(%v, %out : memref<8xf32>, memref<8xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %0 = linalg.index 1 : index
    %1 = arith.index_cast %0 : index to i64
    %2 = arith.cmpf ogt, %acc, %in : f32
    %3 = arith.cmpf une, %acc, %acc : f32
    %4 = arith.ori %2, %3 : i1
    %5 = arith.cmpf oeq, %acc, %in : f32
    %6 = arith.cmpi slt, %idx, %1 : i64
    %7 = arith.andi %5, %6 : i1
    %8 = arith.ori %4, %7 : i1
    %9 = arith.select %4, %acc, %in : f32
    %10 = arith.select %8, %idx, %1 : i64
    linalg.yield %9, %10 : f32, i64
  }
  return
}

/// A combiner whose ties go to the earlier index for some values and to the
/// later for others (it keeps the accumulator unless the two are equal) is
/// no ordered selection: left alone.
// CHECK-LABEL: func.func @not_a_selection
// CHECK: linalg.generic
func.func @not_a_selection(%x: memref<8x100xi32>, %v: memref<8xi32>, %out: memref<8xi64>) {
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xi32>) outs(%v, %out : memref<8xi32>, memref<8xi64>) {
  ^bb0(%in: i32, %acc: i32, %idx: i64):
    %0 = linalg.index 1 : index
    %1 = arith.index_cast %0 : index to i64
    %4 = arith.cmpi ne, %acc, %in : i32
    %9 = arith.select %4, %acc, %in : i32
    %10 = arith.select %4, %idx, %1 : i64
    linalg.yield %9, %10 : i32, i64
  }
  return
}

/// argmax over axis 0: 16 columns a step, each lane its column's own loop
/// over the rows (the maxima exact too: they may be read), the tail masked.
// CHECK-LABEL: func.func @argmax_columns
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xi64>)
// CHECK: vector.load {{.*}} vector<16xf32>
// CHECK: vector.store
// CHECK: vector.create_mask
// CHECK: vector.maskedload
// CHECK: vector.maskedstore
// CHECK-NOT: vector.shuffle
func.func @argmax_columns(%x: memref<50x40xf32>, %v: memref<40xf32>, %out: memref<40xi64>) {
  linalg.generic {indexing_maps = [#t, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<50x40xf32>) outs(%v, %out : memref<40xf32>, memref<40xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %0 = linalg.index 1 : index
    %1 = arith.index_cast %0 : index to i64
    %2 = arith.cmpf ogt, %acc, %in : f32
    %3 = arith.cmpf une, %acc, %acc : f32
    %4 = arith.ori %2, %3 : i1
    %5 = arith.cmpf oeq, %acc, %in : f32
    %6 = arith.cmpi slt, %idx, %1 : i64
    %7 = arith.andi %5, %6 : i1
    %8 = arith.ori %4, %7 : i1
    %9 = arith.select %4, %acc, %in : f32
    %10 = arith.select %8, %idx, %1 : i64
    linalg.yield %9, %10 : f32, i64
  }
  return
}

/// A bool argmax over rows (jax compares i1 unsigned): the values widened
/// to 32-bit lanes as they are read (zero-extended), compared and carried
/// wide, narrowed once for the store. With row-pairs=2 (AVX2): two pairs of
/// 8-lane accumulators a step of 16, two masked tails, the pairs combined
/// (lower index first), then 3 halvings.
// CHECK-LABEL: func.func @argmax_bool_rows
// CHECK-NOT: linalg.generic
// CHECK: arith.extui {{.*}} : i1 to i32
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xi32>, vector<16xi32>)
// CHECK: vector.load {{.*}} vector<16xi1>
// CHECK: arith.extui {{.*}} : vector<16xi1> to vector<16xi32>
// CHECK: arith.cmpi ugt, {{.*}} : vector<16xi32>
// CHECK: arith.maxui {{.*}} : vector<16xi32>
// CHECK: arith.trunci {{.*}} : i32 to i1
// PAIRS-LABEL: func.func @argmax_bool_rows
// PAIRS: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>)
// PAIRS-COUNT-2: vector.load {{.*}} vector<8xi1>
// PAIRS: scf.yield {{.*}} : vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>
// PAIRS-COUNT-2: vector.maskedload
// PAIRS: arith.cmpi slt, {{.*}} : vector<8xi32>
// PAIRS-COUNT-6: vector.shuffle {{.*}} : vector<8xi32>, vector<8xi32>
// PAIRS-NOT: vector.shuffle
// PAIRS: arith.trunci {{.*}} : i32 to i1
func.func @argmax_bool_rows(%x: memref<8x100xi1>, %out: memref<8xi32>) {
  %v = memref.alloc() : memref<8xi1>
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xi1>) outs(%v, %out : memref<8xi1>, memref<8xi32>) {
  ^bb0(%in: i1, %acc: i1, %idx: i32):
    %0 = linalg.index 1 : index
    %1 = arith.index_cast %0 : index to i32
    %2 = arith.cmpi ugt, %acc, %in : i1
    %3 = arith.cmpi eq, %acc, %in : i1
    %4 = arith.cmpi slt, %idx, %1 : i32
    %5 = arith.andi %3, %4 : i1
    %6 = arith.ori %2, %5 : i1
    %7 = arith.maxui %acc, %in : i1
    %8 = arith.select %6, %idx, %1 : i32
    linalg.yield %7, %8 : i1, i32
  }
  memref.dealloc %v : memref<8xi1>
  return
}

/// A bf16 argmax over the middle axis of 4 x 50 x 40 (the input read with
/// its reduced dim in the middle): a loop over the leading dim, 16 columns
/// of the last dim a step, each lane its column's loop over the 50 rows in
/// f32 (extf as read), the maxima truncated back to bf16 for the store.
// CHECK-LABEL: func.func @argmax_bf16_middle
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.extf {{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xi32>)
// CHECK: vector.load {{.*}} : memref<4x50x40xbf16>, vector<16xbf16>
// CHECK: arith.cmpf ogt, {{.*}} : vector<16xf32>
// CHECK: arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store
// CHECK: vector.maskedload
// CHECK-NOT: vector.shuffle
func.func @argmax_bf16_middle(%x: memref<4x50x40xbf16>, %v: memref<4x40xbf16>, %out: memref<4x40xi32>) {
  linalg.generic {indexing_maps = [#mid, #mid_out, #mid_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<4x50x40xbf16>) outs(%v, %out : memref<4x40xbf16>, memref<4x40xi32>) {
  ^bb0(%in: bf16, %acc: bf16, %idx: i32):
    %0 = linalg.index 2 : index
    %1 = arith.index_cast %0 : index to i32
    %2 = arith.cmpf ogt, %acc, %in : bf16
    %3 = arith.cmpf une, %acc, %acc : bf16
    %4 = arith.ori %2, %3 : i1
    %5 = arith.cmpf oeq, %acc, %in : bf16
    %6 = arith.cmpi slt, %idx, %1 : i32
    %7 = arith.andi %5, %6 : i1
    %8 = arith.ori %4, %7 : i1
    %9 = arith.select %4, %acc, %in : bf16
    %10 = arith.select %8, %idx, %1 : i32
    linalg.yield %9, %10 : bf16, i32
  }
  return
}
