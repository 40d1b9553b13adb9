"""The StableHLO reference interpreter as a numerics oracle, run out of process."""
