"""The MLIR text xla-collectives-to-mpi builds: the MPI shim's declarations,
a body per collective, the communicator globals."""
