"""SPMD programs, whatever the target: the device grid a program runs on
(``grid``), this process's MPI world and the C shim compiled collectives call
(``mpi``), and starting a program on every rank without ever hanging (``start``)."""
