"""Lowerings of StableHLO ops to linalg/scf/tensor that upstream lacks (sort,
scatter, fft, collectives, control flow, ...); the helper functions they build
are made in ``builders/``."""
