"""CPU code generation: transform schedules (tiling, vectors, threads) and math
for the JIT; the schedules' planners are in ``plans/``, the MPI shim's calls as
MLIR text in ``builders/``."""
