// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-constants-to-arguments{min-bytes=64})' --split-input-file | FileCheck %s

/// A large constant, dense or a resource, becomes a trailing argument of the
/// entry marked with its index in `xla.constant_arguments`, which holds the
/// values in argument order; the argument attributes the entry had stay.
// CHECK: module attributes {xla.constant_arguments = [dense<"0x0001
// CHECK-SAME: : tensor<101xi8>, dense_resource<weights> : tensor<128xf32>]}
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[X:.*]]: tensor<101xi8> {jax.arg_info = "x"}, %[[T:.*]]: tensor<101xi8> {xla.constant = 0 : i64}, %[[W:.*]]: tensor<128xf32> {xla.constant = 1 : i64})
// CHECK-NOT: stablehlo.constant
// CHECK: %[[S:.*]] = stablehlo.add %[[X]], %[[T]]
// CHECK: return %[[S]], %[[W]]
module {
  func.func public @main(%x: tensor<101xi8> {jax.arg_info = "x"}) -> (tensor<101xi8>, tensor<128xf32>) {
    %t = stablehlo.constant dense<"0x000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F6061626364"> : tensor<101xi8>
    %w = stablehlo.constant dense_resource<weights> : tensor<128xf32>
    %s = stablehlo.add %x, %t : tensor<101xi8>
    return %s, %w : tensor<101xi8>, tensor<128xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      weights: "0x04000000000000000100000002000000030000000400000005000000060000000700000008000000090000000A0000000B0000000C0000000D0000000E0000000F000000100000001100000012000000130000001400000015000000160000001700000018000000190000001A0000001B0000001C0000001D0000001E0000001F000000200000002100000022000000230000002400000025000000260000002700000028000000290000002A0000002B0000002C0000002D0000002E0000002F000000300000003100000032000000330000003400000035000000360000003700000038000000390000003A0000003B0000003C0000003D0000003E0000003F000000400000004100000042000000430000004400000045000000460000004700000048000000490000004A0000004B0000004C0000004D0000004E0000004F000000500000005100000052000000530000005400000055000000560000005700000058000000590000005A0000005B0000005C0000005D0000005E0000005F000000600000006100000062000000630000006400000065000000660000006700000068000000690000006A0000006B0000006C0000006D0000006E0000006F000000700000007100000072000000730000007400000075000000760000007700000078000000790000007A0000007B0000007C0000007D0000007E0000007F000000"
    }
  }
#-}

// -----

/// Splats, small constants (no more than 100 elements, or under `min-bytes`),
/// i1, complex and constants of private functions stay constants.
// CHECK-NOT: xla.constant_arguments
// CHECK-LABEL: func.func public @kept
// CHECK-SAME: (%{{.*}}: tensor<200xf32>) -> tensor<200xf32>
// CHECK-COUNT-4: stablehlo.constant
// CHECK-LABEL: func.func private @helper
// CHECK: stablehlo.constant dense<"0x
func.func public @kept(%x: tensor<200xf32>) -> tensor<200xf32> {
  %splat = stablehlo.constant dense<2.0> : tensor<200xf32>
  %few = stablehlo.constant dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]> : tensor<20xi32>
  %bits = stablehlo.constant dense<"0x0101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101"> : tensor<200xi1>
  %pairs = stablehlo.constant dense<(1.0, 2.0)> : tensor<200xcomplex<f32>>
  %0 = stablehlo.add %x, %splat : tensor<200xf32>
  return %0 : tensor<200xf32>
}
func.func private @helper() -> tensor<101xi8> {
  %t = stablehlo.constant dense<"0x000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F6061626364"> : tensor<101xi8>
  return %t : tensor<101xi8>
}

// -----

/// A constant used inside a while loop's body is read there from the entry's
/// argument; one value used twice is one argument.
// CHECK-LABEL: func.func public @loop
// CHECK-SAME: (%[[X:.*]]: tensor<101xi8>, %[[T:.*]]: tensor<101xi8> {xla.constant = 0 : i64})
// CHECK: stablehlo.while
// CHECK: stablehlo.add %{{.*}}, %[[T]]
// CHECK: stablehlo.subtract %{{.*}}, %[[T]]
func.func public @loop(%x: tensor<101xi8>) -> tensor<101xi8> {
  %t = stablehlo.constant dense<"0x000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F6061626364"> : tensor<101xi8>
  %r = stablehlo.while(%v = %x) : tensor<101xi8>
    cond {
      %c = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %u = stablehlo.constant dense<"0x000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F6061626364"> : tensor<101xi8>
      %a = stablehlo.add %v, %u : tensor<101xi8>
      stablehlo.return %a : tensor<101xi8>
    }
  %s = stablehlo.subtract %r, %t : tensor<101xi8>
  return %s : tensor<101xi8>
}

// -----

/// A constant inside a reduce body stays there: that region takes no value
/// from above in every lowering (the ingest's canonicalize usually hoists it
/// first, and then it is the entry's like any other).
// CHECK-LABEL: func.func public @reduced
// CHECK-SAME: (%{{.*}}: tensor<101xi8>) -> tensor<i8>
// CHECK-NOT: xla.constant
// CHECK: stablehlo.reduce
// CHECK: stablehlo.constant dense<"0x
func.func public @reduced(%x: tensor<101xi8>) -> tensor<i8> {
  %zero = stablehlo.constant dense<0> : tensor<i8>
  %r = stablehlo.reduce(%x init: %zero) across dimensions = [0] : (tensor<101xi8>, tensor<i8>) -> tensor<i8>
    reducer(%a: tensor<i8>, %b: tensor<i8>) {
      %t = stablehlo.constant dense<"0x000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F6061626364"> : tensor<101xi8>
      %s = stablehlo.slice %t [3:4] : (tensor<101xi8>) -> tensor<1xi8>
      %k = stablehlo.reshape %s : (tensor<1xi8>) -> tensor<i8>
      %u = stablehlo.add %a, %b : tensor<i8>
      %v = stablehlo.add %u, %k : tensor<i8>
      stablehlo.return %v : tensor<i8>
    }
  return %r : tensor<i8>
}
