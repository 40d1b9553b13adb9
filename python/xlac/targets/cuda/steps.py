"""The steps of a CUDA program's host schedule (``xlac.targets.cuda.schedule`` reads
them from the entry function; ``runtime`` runs them). Plain data: loading a cached
program builds these without MLIR or numpy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Alloc:
    value: str
    nbytes: int


@dataclass(frozen=True)
class View:
    value: str
    source: str


@dataclass(frozen=True)
class Const:
    value: str
    data: bytes


@dataclass(frozen=True)
class Copy:
    source: str
    target: str
    nbytes: int


@dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem: int
    args: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class Collective:
    """One collective on device buffers (``buffers``: send, if any, then receive)."""

    kind: str
    element: str
    buffers: tuple[str, ...]
    count: int                      # elements per member (as xlac_mpi.c counts them)
    nbytes: int                     # of the receive buffer
    groups: tuple[tuple[int, ...], ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()
    reduction: str = ""
