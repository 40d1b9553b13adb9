"""XLA-style fusion: grouping ops into xla.fusion kernels, and inlining them again."""
