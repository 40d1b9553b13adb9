"""Idle OpenMP workers that follow the machine's load while a process runs.

``libraries.idle_workers_sleep`` picks libiomp5's ``KMP_BLOCKTIME`` once, when
the process starts: spin 1 ms on free cores, sleep at once on busy ones. A
process that started on a quiet machine kept spinning when the load came
later, and a scan pays that at every step: the flax LSTM scan (two parallel
products per step, 256 fork-joins per call) ran 44-73 ms spinning against
29.5-30.2 ms sleeping at load 3-5 (XLA 26-29), a process that started busy
kept sleeping on free cores (BERT 42 ms against 21 spinning). So before a
call, at most once per ``LOOK_EVERY_S``, the load is looked at again and the
blocktime set anew (``kmp_set_blocktime``, which reaches the workers of the
calling thread's next parallel region) when two looks in a row agree.
A ``KMP_BLOCKTIME`` of the user's is never changed.
"""

from __future__ import annotations

import ctypes
import os
import time

LOOK_EVERY_S = 0.5
SPIN_MS, SLEEP_MS = 1, 0


class _Follower:
    """The blocktime in force, the last look's, and when to look next."""

    def __init__(self):
        self.next_look = 0.0
        self.active: int | None = None       # None: not ours to change (the user's, or no libiomp5)
        self.last_look: int | None = None
        self.set_blocktime = None

    def start(self, library_path: str | None, blocktime: int | None) -> None:
        if library_path is None or blocktime is None or self.set_blocktime is not None:
            return                           # not ours, or followed already (from the blocktime in force)
        try:
            self.set_blocktime = ctypes.CDLL(library_path).kmp_set_blocktime
        except (OSError, AttributeError):
            return
        self.active = self.last_look = blocktime

    def look(self, now: float) -> None:
        self.next_look = now + LOOK_EVERY_S
        if self.active is None:
            return
        wanted = SLEEP_MS if cores_busy_elsewhere() else SPIN_MS
        if wanted == self.last_look and wanted != self.active:
            self.set_blocktime(ctypes.c_int(wanted))
            self.active = wanted
        self.last_look = wanted


_FOLLOWER = _Follower()


def start_following(library_path: str | None, blocktime: int | None) -> None:
    """From now on ``follow_load`` may change libiomp5's blocktime, which is
    ``blocktime`` ms now (None: the user's, left alone)."""
    _FOLLOWER.start(library_path, blocktime)


def follow_if_loaded(blocktime: int | None, soname: str = "libiomp5.so") -> None:
    """``start_following`` where libiomp5 is in the process already (a loaded
    artifact links it itself); nothing is loaded here."""
    try:
        ctypes.CDLL(soname, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return
    start_following(soname, blocktime)


def follow_load() -> None:
    """Before a call: look at the load again if it is time (a clock read otherwise)."""
    now = time.monotonic()
    if now >= _FOLLOWER.next_look:
        _FOLLOWER.look(now)


def cores_busy_elsewhere() -> bool:
    """Whether other processes' runnable tasks fill every core this process
    may use: the running count of /proc/loadavg less this process's own
    running threads (a spinning worker is one). False where it cannot be read."""
    cores = len(os.sched_getaffinity(0))
    try:
        with open("/proc/loadavg") as handle:
            running = int(handle.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return False
    # this process's threads are only listed when the count alone says busy
    return running >= cores and running - _own_running_threads() >= cores


def _own_running_threads() -> int:
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat") as handle:
                # the state follows the command's closing parenthesis
                count += handle.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            continue
    return max(count, 1)
