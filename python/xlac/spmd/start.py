"""Starting an SPMD program on every rank of an MPI job, without ever hanging.

Every rank compiles (or loads) the same program; before any rank enters a
collective, all of them agree that all of them succeeded. A rank that failed
raises its own error, the others raise one saying that another rank failed,
and none waits in a collective for a rank that will never come. Only then
are the program's communicators made (collectively, once).
"""

from __future__ import annotations

from collections.abc import Callable

from xlac.errors import CompileError, error
from xlac.spmd.grid import DeviceGrid
from xlac.spmd.mpi import mpi_world


def start_on_every_rank(grid: DeviceGrid, build: Callable, source_name: str, options):
    """``build()`` (an Executable) on this rank, once every rank has built its own;
    the executable's communicators are made before it is returned."""
    world = mpi_world(options.mpicc, options.cache_dir)
    if world.size != grid.size:
        launch = f"mpiexec -n {grid.size} ..." if world.size == 1 else f"-n {grid.size}"
        raise CompileError(error(f"the program runs on {grid}; this MPI job has "
                                 f"{world.size} rank(s)", source_name),
                           f"start it with {launch} (one process per device)")
    failure = None
    try:
        exe = build()
    except Exception as exc:  # noqa: BLE001 - any failure must reach the agreement first
        failure = exc
    if not world.agree(failure is None):
        if failure is not None:
            raise failure
        raise CompileError(error(f"rank {world.rank}: another rank failed to compile or load "
                                 "this program (its error is on its stderr); no rank entered "
                                 "a collective", source_name))
    start = getattr(exe.function, "start_collectives", None)
    if start is not None:
        start()
    return exe
