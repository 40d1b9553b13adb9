"""Lowerings of StableHLO to linalg/scf/tensor that upstream lacks, and their helpers."""
