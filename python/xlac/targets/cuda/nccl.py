"""Collectives on NVIDIA GPUs: NCCL through ctypes, bootstrapped through MPI.

One process per GPU, as on CPUs. When a program is started on every rank
(``xlac.spmd.start``) its communicators are made: for each set of
replica groups in its schedule, the first member of each group asks NCCL
for a unique id, sends it to the other members over MPI (the CPU shim's
communicator for the same groups), and every member joins with
``ncclCommInitRank`` at its position in the group. Each ``Collective`` step
then is one NCCL call (or a group of sends and receives) on the function's
stream, between its kernels; nothing goes through the host.

NCCL comes from the ``nvidia-nccl-cu12`` wheel (``pip install
'xlac[cuda-nccl]'``) or the system's ``libnccl.so.2``. Tests run the same
code against a fake NCCL (test/support/xlac_emulator/fake_nccl.py).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from importlib import metadata

from xlac.dtypes import numpy_dtype
from xlac.targets.cuda.control_flow import walk_steps
from xlac.targets.cuda.errors import CudaError, CudaUnavailable
from xlac.targets.cuda.nccl_types import BYTES, reduction_for
from xlac.targets.cuda.steps import Collective

_ID_BYTES = 128


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * _ID_BYTES)]


def _library_path() -> str:
    try:
        for file in metadata.distribution("nvidia-nccl-cu12").files or []:
            if file.name == "libnccl.so.2":
                return str(file.locate().resolve())
    except metadata.PackageNotFoundError:
        pass
    found = ctypes.util.find_library("nccl")
    if not found:
        raise CudaUnavailable("no NCCL: collectives on target='cuda' need libnccl.so.2 "
                              "(pip install 'xlac[cuda-nccl]', or the system's NCCL)")
    return found


class NcclLibrary:
    """The NCCL calls xlac makes; every failure becomes a CudaError naming it."""

    def __init__(self, path: str | None = None):
        self._lib = ctypes.CDLL(path or _library_path())
        self._lib.ncclGetErrorString.restype = ctypes.c_char_p

    def _check(self, name: str, *args) -> None:
        status = getattr(self._lib, name)(*args)
        if status != 0:
            raise CudaError(f"NCCL: {name} failed: {self._lib.ncclGetErrorString(status).decode()}")

    def get_unique_id(self) -> bytes:
        unique = _UniqueId()
        self._check("ncclGetUniqueId", ctypes.byref(unique))
        return bytes(unique.internal)

    def comm_init_rank(self, nranks: int, unique: bytes, rank: int, members) -> int:
        """``members``: the group's world ranks (NCCL itself needs only the id)."""
        comm = ctypes.c_void_p()
        self._check("ncclCommInitRank", ctypes.byref(comm), ctypes.c_int(nranks),
                    _UniqueId(unique), ctypes.c_int(rank))
        return comm.value

    def comm_destroy(self, comm: int) -> None:
        self._check("ncclCommDestroy", ctypes.c_void_p(comm))

    def all_reduce(self, send, recv, count, dtype, op, comm, stream) -> None:
        self._check("ncclAllReduce", *_ptrs(send, recv), ctypes.c_size_t(count), ctypes.c_int(dtype),
                    ctypes.c_int(op), ctypes.c_void_p(comm), ctypes.c_void_p(stream))

    def reduce_scatter(self, send, recv, count, dtype, op, comm, stream) -> None:
        self._check("ncclReduceScatter", *_ptrs(send, recv), ctypes.c_size_t(count),
                    ctypes.c_int(dtype), ctypes.c_int(op), ctypes.c_void_p(comm), ctypes.c_void_p(stream))

    def all_gather(self, send, recv, count, dtype, comm, stream) -> None:
        self._check("ncclAllGather", *_ptrs(send, recv), ctypes.c_size_t(count), ctypes.c_int(dtype),
                    ctypes.c_void_p(comm), ctypes.c_void_p(stream))

    def broadcast(self, send, recv, count, dtype, root, comm, stream) -> None:
        self._check("ncclBroadcast", *_ptrs(send, recv), ctypes.c_size_t(count), ctypes.c_int(dtype),
                    ctypes.c_int(root), ctypes.c_void_p(comm), ctypes.c_void_p(stream))

    def send(self, buffer, count, dtype, peer, comm, stream) -> None:
        self._check("ncclSend", ctypes.c_void_p(buffer), ctypes.c_size_t(count), ctypes.c_int(dtype),
                    ctypes.c_int(peer), ctypes.c_void_p(comm), ctypes.c_void_p(stream))

    def recv(self, buffer, count, dtype, peer, comm, stream) -> None:
        self._check("ncclRecv", ctypes.c_void_p(buffer), ctypes.c_size_t(count), ctypes.c_int(dtype),
                    ctypes.c_int(peer), ctypes.c_void_p(comm), ctypes.c_void_p(stream))

    def group_start(self) -> None:
        self._check("ncclGroupStart")

    def group_end(self) -> None:
        self._check("ncclGroupEnd")


def _ptrs(*pointers):
    return [ctypes.c_void_p(p) for p in pointers]


class NcclCollectives:
    """A program's NCCL communicators (one per replica-group set) and its
    collective steps run on a stream."""

    def __init__(self, steps: list, nccl, world, partitions: int):
        self._steps = [s for s in walk_steps(steps) if isinstance(s, Collective)]
        self._nccl, self._world = nccl, world
        self._comms: dict[tuple, tuple[int, tuple[int, ...]] | None] = {}
        rank = world.rank                              # host values the device copies in
        self._ids = {"partition_id": ctypes.c_int32(rank % partitions),
                     "replica_id": ctypes.c_int32(rank // partitions)}

    def start(self) -> None:
        """Collective on every rank: the communicators, in the schedule's order."""
        world_group = (tuple(range(self._world.size)),)
        for step in self._steps:
            groups = world_group if step.kind == "collective_permute" else step.groups
            if groups and groups not in self._comms:
                self._comms[groups] = self._join(groups)

    def _join(self, groups: tuple) -> tuple[int, tuple[int, ...]] | None:
        slot = self._world.comm_create([list(g) for g in groups])
        mine = next((g for g in groups if self._world.rank in g), None)
        first = mine is not None and mine[0] == self._world.rank
        unique = self._nccl.get_unique_id() if first else bytes(_ID_BYTES)
        unique = self._world.broadcast_bytes(slot, unique)
        if mine is None:
            return None
        comm = self._nccl.comm_init_rank(len(mine), unique, mine.index(self._world.rank), mine)
        return comm, mine

    def close(self) -> None:
        for entry in self._comms.values():
            if entry is not None:
                self._nccl.comm_destroy(entry[0])
        self._comms = {}

    def run(self, step: Collective, buffers: dict, driver, stream) -> None:
        pointers = [buffers[name] for name in step.buffers]
        recv, send = pointers[-1], pointers[0]
        if step.kind in ("replica_id", "partition_id"):
            return self._device_id(step.kind, recv, driver, stream)
        if step.kind == "collective_permute":
            return self._permute(step, send, recv, driver, stream)
        entry = self._comms.get(step.groups)
        if entry is None:                       # in no group: zeros, as StableHLO says
            return driver.memset_async(recv, 0, step.nbytes, stream)
        comm, group = entry
        size = numpy_dtype(step.element).itemsize
        nccl = self._nccl
        if step.kind in ("all_reduce", "reduce_scatter"):
            dtype, op, parts = reduction_for(step.element, step.reduction)
            call = nccl.all_reduce if step.kind == "all_reduce" else nccl.reduce_scatter
            call(send, recv, step.count * parts, dtype, op, comm, stream)
        elif step.kind == "all_gather":
            nccl.all_gather(send, recv, step.count * size, BYTES, comm, stream)
        elif step.kind == "collective_broadcast":
            nccl.broadcast(send, recv, step.count * size, BYTES, 0, comm, stream)
        else:                                   # all_to_all: block j to and from member j
            block = step.count * size
            nccl.group_start()
            for j in range(len(group)):
                nccl.send(send + j * block, block, BYTES, j, comm, stream)
                nccl.recv(recv + j * block, block, BYTES, j, comm, stream)
            nccl.group_end()
        return None

    def _permute(self, step, send, recv, driver, stream) -> None:
        comm, _ = self._comms[(tuple(range(self._world.size)),)]
        rank, nbytes = self._world.rank, step.nbytes
        targets = [t for s, t in step.pairs if s == rank]
        sources = [s for s, t in step.pairs if t == rank]
        if not sources:
            driver.memset_async(recv, 0, nbytes, stream)
        self._nccl.group_start()
        for target in targets:
            self._nccl.send(send, nbytes, BYTES, target, comm, stream)
        for source in sources:
            self._nccl.recv(recv, nbytes, BYTES, source, comm, stream)
        self._nccl.group_end()

    def _device_id(self, kind: str, recv, driver, stream) -> None:
        driver.to_device_async(recv, ctypes.addressof(self._ids[kind]), 4, stream)
