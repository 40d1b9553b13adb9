"""A stand-in for NCCL, for testing the cuda collectives without GPUs.

It runs each NCCL call on FakeDriver memory (device memory is host memory
there), carrying the bytes between the ranks of an MPI job with mpi4py, so
the cuda runtime's whole path (the schedule's collective steps, the
communicators bootstrapped over MPI, counts, offsets, groups) runs under
``mpiexec`` as it would with NCCL. Reductions gather every member's buffer
and reduce in numpy, in the element type.
"""

from __future__ import annotations

import ctypes
import os

import ml_dtypes
import numpy as np

_DTYPES = {0: np.int8, 1: np.uint8, 2: np.int32, 3: np.uint32, 4: np.int64, 5: np.uint64,
           6: np.float16, 7: np.float32, 8: np.float64, 9: ml_dtypes.bfloat16}
_REDUCE = {0: np.sum, 1: np.prod, 2: np.max, 3: np.min}


def _view(pointer: int, count: int, dtype: int) -> np.ndarray:
    nbytes = count * np.dtype(_DTYPES[dtype]).itemsize
    raw = np.ctypeslib.as_array((ctypes.c_uint8 * max(nbytes, 1)).from_address(pointer))[:nbytes]
    return raw.view(_DTYPES[dtype])


class FakeNccl:
    def __init__(self):
        from mpi4py import MPI
        self._mpi = MPI
        self._comms: dict[int, object] = {}
        self._pending: list | None = None
        self.calls: list[str] = []

    def get_unique_id(self) -> bytes:
        return os.urandom(128)

    def comm_init_rank(self, nranks: int, unique: bytes, rank: int, members) -> int:
        world = self._mpi.COMM_WORLD
        comm = world.Create_group(world.Get_group().Incl(list(members)))
        assert (comm.Get_size(), comm.Get_rank()) == (nranks, rank)
        self._comms[len(self._comms) + 1] = comm
        return len(self._comms)

    def comm_destroy(self, comm: int) -> None:
        self._comms.pop(comm).Free()

    def _gathered(self, comm, send: np.ndarray) -> np.ndarray:
        out = np.empty((comm.Get_size(),) + send.shape, send.dtype)
        comm.Allgather(send.view(np.uint8), out.view(np.uint8))
        return out

    def all_reduce(self, send, recv, count, dtype, op, comm, stream) -> None:
        self.calls.append("all_reduce")
        every = self._gathered(self._comms[comm], _view(send, count, dtype).copy())
        _view(recv, count, dtype)[:] = _reduce(every, op)

    def reduce_scatter(self, send, recv, count, dtype, op, comm, stream) -> None:
        self.calls.append("reduce_scatter")
        group = self._comms[comm]
        every = self._gathered(group, _view(send, count * group.Get_size(), dtype).copy())
        block = group.Get_rank()
        _view(recv, count, dtype)[:] = _reduce(every, op)[block * count:(block + 1) * count]

    def all_gather(self, send, recv, count, dtype, comm, stream) -> None:
        self.calls.append("all_gather")
        every = self._gathered(self._comms[comm], _view(send, count, dtype).copy())
        _view(recv, count * len(every), dtype)[:] = every.reshape(-1)

    def broadcast(self, send, recv, count, dtype, root, comm, stream) -> None:
        self.calls.append("broadcast")
        group = self._comms[comm]
        data = _view(send, count, dtype).copy() if group.Get_rank() == root \
            else np.empty(count, _DTYPES[dtype])
        group.Bcast(data.view(np.uint8), root=root)
        _view(recv, count, dtype)[:] = data

    def group_start(self) -> None:
        self._pending = []

    def send(self, buffer, count, dtype, peer, comm, stream) -> None:
        self._pending.append(("send", buffer, count, dtype, peer, comm))

    def recv(self, buffer, count, dtype, peer, comm, stream) -> None:
        self._pending.append(("recv", buffer, count, dtype, peer, comm))

    def group_end(self) -> None:
        pending, self._pending = self._pending, None
        self.calls.append("group")
        requests, kept = [], []
        for what, buffer, count, dtype, peer, comm in pending:
            data = _view(buffer, count, dtype)
            if what == "send":
                kept.append(data.copy())
                requests.append(self._comms[comm].Isend(kept[-1].view(np.uint8), dest=peer))
            else:
                requests.append(self._comms[comm].Irecv(data.view(np.uint8), source=peer))
        self._mpi.Request.Waitall(requests)


def _reduce(every: np.ndarray, op: int) -> np.ndarray:
    wide = every.astype(np.float32) if every.dtype in (np.float16, ml_dtypes.bfloat16) else every
    return _REDUCE[op](wide, axis=0).astype(every.dtype)
