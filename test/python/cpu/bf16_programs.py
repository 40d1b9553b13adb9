"""bf16 programs the bf16 micro-kernels' tests share (AMX and AVX512-BF16)."""

# Two bf16 dots with f32 sums, ReLU and a round to bf16 between them: what
# `jnp.dot(..., preferred_element_type=jnp.float32)` in a mixed-precision MLP emits.
BF16_MLP_F32_SUMS = """
func.func @main(%x: tensor<64x256xbf16>, %w1: tensor<256x512xbf16>, %w2: tensor<512x512xbf16>) -> tensor<64x512xf32> {
  %c = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<64x256xbf16>, tensor<256x512xbf16>) -> tensor<64x512xf32>
  %z = stablehlo.constant dense<0.0> : tensor<64x512xf32>
  %r = stablehlo.maximum %c, %z : tensor<64x512xf32>
  %h = stablehlo.convert %r : (tensor<64x512xf32>) -> tensor<64x512xbf16>
  %y = stablehlo.dot_general %h, %w2, contracting_dims = [1] x [0] : (tensor<64x512xbf16>, tensor<512x512xbf16>) -> tensor<64x512xf32>
  return %y : tensor<64x512xf32>
}
"""
