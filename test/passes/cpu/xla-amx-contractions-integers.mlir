// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-amx-contractions{min-work=1 bf16=false integers=i16})' --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

/// Where the integer kernel is the only one (x86-64-v3, -v4): an exact f32
/// matmul of widened i8 and ui8 from zeros takes i16 operands (the widenings
/// made again as extsi / extui to i16), an i32 C marked for the kernel, and
/// its exact sums back to f32 in the epilogue; A's rows (60) and k (250)
/// padded with i16 zeros to 64 and 256, C cut back.
// CHECK-LABEL: func.func @widened_integers
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i16
// CHECK-DAG: arith.extsi %{{.*}} : i8 to i16
// CHECK-DAG: arith.extui %{{.*}} : i8 to i16
// CHECK: tensor.pad
// CHECK: tensor.yield %[[Z]] : i16
// CHECK: %[[C:.*]] = tensor.empty() : tensor<64x96xi32>
// CHECK: %[[P:.*]] = linalg.matmul {xla.amx, xla.amx_zeros} ins({{.*}} : tensor<64x256xi16>, tensor<256x96xi16>) outs(%[[C]] : tensor<64x96xi32>)
// CHECK: %[[CUT:.*]] = tensor.extract_slice %[[P]][0, 0] [60, 96] [1, 1] : tensor<64x96xi32> to tensor<60x96xi32>
// CHECK: linalg.generic {{.*}} ins(%[[CUT]] : tensor<60x96xi32>) outs(%{{.*}} : tensor<60x96xf32>)
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK-NOT: linalg.fill
func.func @widened_integers(%a: tensor<60x250xi8>, %b: tensor<250x96xi8>) -> tensor<60x96xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<60x250xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<60x250xi8>) outs(%ea : tensor<60x250xf32>) {
  ^bb0(%x: i8, %o: f32):
    %w = arith.sitofp %x : i8 to f32
    linalg.yield %w : f32
  } -> tensor<60x250xf32>
  %eb = tensor.empty() : tensor<250x96xf32>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<250x96xi8>) outs(%eb : tensor<250x96xf32>) {
  ^bb0(%x: i8, %o: f32):
    %w = arith.uitofp %x : i8 to f32
    linalg.yield %w : f32
  } -> tensor<250x96xf32>
  %ec = tensor.empty() : tensor<60x96xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<60x96xf32>) -> tensor<60x96xf32>
  %p = linalg.matmul ins(%wa, %wb : tensor<60x250xf32>, tensor<250x96xf32>) outs(%c : tensor<60x96xf32>) -> tensor<60x96xf32>
  return %p : tensor<60x96xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

/// Without a bf16 kernel (bf16=false) a matmul of widened bf16 stays as it is.
// CHECK-LABEL: func.func @widened_bf16
// CHECK-NOT: xla.amx
func.func @widened_bf16(%a: tensor<64x128xbf16>, %b: tensor<128x96xbf16>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<64x128xf32>
  %wa = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x128xbf16>) outs(%ea : tensor<64x128xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<64x128xf32>
  %eb = tensor.empty() : tensor<128x96xf32>
  %wb = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<128x96xbf16>) outs(%eb : tensor<128x96xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<128x96xf32>
  %ec = tensor.empty() : tensor<64x96xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<64x96xf32>) -> tensor<64x96xf32>
  %p = linalg.matmul ins(%wa, %wb : tensor<64x128xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %p : tensor<64x96xf32>
}

// -----

#id3 = affine_map<(d0, d1) -> (d0, d1)>

/// An i32 matmul of i8 and ui8 extended (xla-widen-contractions{integer-kernel=true}:
/// one dot over the whole k, 3000 past every f32 bound) takes the kernel with its
/// i32 C as it is: the extensions made again to i16, no sitofp after.
// CHECK-LABEL: func.func @extended_integers_whole_k
// CHECK-DAG: arith.extsi %{{.*}} : i8 to i16
// CHECK-DAG: arith.extui %{{.*}} : i8 to i16
// CHECK: %[[P:.*]] = linalg.matmul {xla.amx, xla.amx_zeros} ins({{.*}} : tensor<64x3008xi16>, tensor<3008x96xi16>) outs(%{{.*}} : tensor<64x96xi32>)
// CHECK: %[[CUT:.*]] = tensor.extract_slice %[[P]]
// CHECK-NOT: sitofp
// CHECK: return %[[CUT]] : tensor<60x96xi32>
func.func @extended_integers_whole_k(%a: tensor<60x3000xi8>, %b: tensor<3000x96xi8>) -> tensor<60x96xi32> {
  %zero = arith.constant 0 : i32
  %ea = tensor.empty() : tensor<60x3000xi32>
  %wa = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<60x3000xi8>) outs(%ea : tensor<60x3000xi32>) {
  ^bb0(%x: i8, %o: i32):
    %w = arith.extsi %x : i8 to i32
    linalg.yield %w : i32
  } -> tensor<60x3000xi32>
  %eb = tensor.empty() : tensor<3000x96xi32>
  %wb = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<3000x96xi8>) outs(%eb : tensor<3000x96xi32>) {
  ^bb0(%x: i8, %o: i32):
    %w = arith.extui %x : i8 to i32
    linalg.yield %w : i32
  } -> tensor<3000x96xi32>
  %ec = tensor.empty() : tensor<60x96xi32>
  %c = linalg.fill ins(%zero : i32) outs(%ec : tensor<60x96xi32>) -> tensor<60x96xi32>
  %p = linalg.matmul ins(%wa, %wb : tensor<60x3000xi32>, tensor<3000x96xi32>) outs(%c : tensor<60x96xi32>) -> tensor<60x96xi32>
  return %p : tensor<60x96xi32>
}

// -----

#id4 = affine_map<(d0, d1) -> (d0, d1)>

/// An i32 matmul of genuine i16 operands (extended from i16, not 8 bits) is not
/// the kernel's: it stays.
// CHECK-LABEL: func.func @extended_i16_stays
// CHECK-NOT: xla.amx
func.func @extended_i16_stays(%a: tensor<64x512xi16>, %b: tensor<512x96xi32>) -> tensor<64x96xi32> {
  %zero = arith.constant 0 : i32
  %ea = tensor.empty() : tensor<64x512xi32>
  %wa = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x512xi16>) outs(%ea : tensor<64x512xi32>) {
  ^bb0(%x: i16, %o: i32):
    %w = arith.extsi %x : i16 to i32
    linalg.yield %w : i32
  } -> tensor<64x512xi32>
  %ec = tensor.empty() : tensor<64x96xi32>
  %c = linalg.fill ins(%zero : i32) outs(%ec : tensor<64x96xi32>) -> tensor<64x96xi32>
  %p = linalg.matmul ins(%wa, %b : tensor<64x512xi32>, tensor<512x96xi32>) outs(%c : tensor<64x96xi32>) -> tensor<64x96xi32>
  return %p : tensor<64x96xi32>
}
