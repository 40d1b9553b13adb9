"""What the op lowerings build their helper functions from: the helpers' MLIR
text (scatter, sort, top-k, reduce windows, convolutions, collectives), the
LAPACK routines behind JAX's custom calls, and a collective's groups of ranks."""
