"""How long libiomp5's idle workers spin: 1 ms where this process has the
cores, 0 where other runnable tasks fill them, the user's KMP_BLOCKTIME
always. /proc/loadavg is faked: no test depends on the machine's load."""

from __future__ import annotations

import builtins
import io
import os
import subprocess
import sys

import pytest

from xlac.targets.cpu import idle_workers, libraries


def _fake_loadavg(monkeypatch, running: int, cores: int = 2) -> None:
    real_open = builtins.open

    def fake_open(path, *args, **kwargs):
        if path == "/proc/loadavg":
            return io.StringIO(f"1.00 1.00 1.00 {running}/300 4242\n")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(libraries.os, "sched_getaffinity", lambda pid: set(range(cores)))


@pytest.mark.parametrize("running, busy", [(1, False), (2, False), (3, True), (9, True)])
def test_cores_busy_elsewhere_counts_other_runnable_tasks(monkeypatch, running, busy):
    _fake_loadavg(monkeypatch, running)           # 2 cores; "running" counts this process
    assert libraries.cores_busy_elsewhere() is busy


def test_unreadable_loadavg_is_not_load(monkeypatch):
    real_open = builtins.open

    def no_proc(path, *args, **kwargs):
        if path == "/proc/loadavg":
            raise OSError("no /proc here")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", no_proc)
    assert libraries.cores_busy_elsewhere() is False


@pytest.mark.parametrize("running, expected", [(1, libraries.SPIN_MS), (5, "0")])
def test_blocktime_follows_the_load(monkeypatch, running, expected):
    _fake_loadavg(monkeypatch, running)
    monkeypatch.delenv("KMP_BLOCKTIME", raising=False)
    libraries.idle_workers_sleep.cache_clear()
    try:
        libraries.idle_workers_sleep()
        assert libraries.os.environ["KMP_BLOCKTIME"] == expected
    finally:
        libraries.idle_workers_sleep.cache_clear()


def test_users_blocktime_wins(monkeypatch):
    _fake_loadavg(monkeypatch, 9)
    monkeypatch.setenv("KMP_BLOCKTIME", "200")
    libraries.idle_workers_sleep.cache_clear()
    try:
        libraries.idle_workers_sleep()
        assert libraries.os.environ["KMP_BLOCKTIME"] == "200"
    finally:
        libraries.idle_workers_sleep.cache_clear()


@pytest.mark.parametrize("inherited, chosen, expected, ours", [
    ("1", "1", "0", True),          # the parent's choice (quiet then): this process chooses again
    ("0", "0", "0", True),
    ("1", "0", "1", False),         # set since by the user: kept
    ("200", None, "200", False),    # the user's, no xlac parent
    (None, "1", "0", True),         # the user removed it: chosen
])
def test_a_parents_choice_is_not_the_users(monkeypatch, inherited, chosen, expected, ours):
    """A process started from an xlac process inherits the blocktime that one
    chose, marked as xlac's: it chooses from its own load (busy here)."""
    _fake_loadavg(monkeypatch, 9)
    for name, value in (("KMP_BLOCKTIME", inherited), (libraries.CHOSEN, chosen)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    libraries.idle_workers_sleep.cache_clear()
    try:
        returned = libraries.idle_workers_sleep()
        assert libraries.os.environ["KMP_BLOCKTIME"] == expected
        assert returned == (int(expected) if ours else None)
    finally:
        libraries.idle_workers_sleep.cache_clear()


def test_set_before_the_first_parallel_region():
    """A fresh process that compiles and runs a parallel program has chosen
    by then (libiomp5 reads it once, at its first region)."""
    code = ("import os, numpy as np, xlac\n"
            "exe = xlac.compile('func.func @main(%a: tensor<1048576xf32>) -> tensor<1048576xf32> {\\n"
            "  %0 = stablehlo.exponential %a : tensor<1048576xf32>\\n"
            "  return %0 : tensor<1048576xf32>\\n}', cache=False)\n"
            "exe(np.ones(1048576, np.float32))\n"
            "from xlac.targets.cpu.idle_workers import _FOLLOWER\n"
            "print(os.environ['KMP_BLOCKTIME'], _FOLLOWER.active, _FOLLOWER.set_blocktime is not None)\n")
    env = {k: v for k, v in os.environ.items() if k != "KMP_BLOCKTIME"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    blocktime, active, can_set = out.stdout.split()
    assert blocktime in ("0", libraries.SPIN_MS)
    # ours, so followed from then on, through libiomp5's own kmp_set_blocktime
    assert active == blocktime and can_set == "True"


class _Setter:
    def __init__(self):
        self.calls = []

    def __call__(self, value):
        self.calls.append(value.value)


def _follower(monkeypatch, blocktime, looks):
    """A follower in force at ``blocktime`` whose looks at the load say busy
    or not in turn (``looks``), and the blocktimes it set."""
    follower, setter = idle_workers._Follower(), _Setter()
    follower.active = follower.last_look = blocktime
    follower.set_blocktime = setter if blocktime is not None else None
    answers = iter(looks)
    monkeypatch.setattr(idle_workers, "cores_busy_elsewhere", lambda: next(answers))
    for now in range(len(looks)):
        follower.look(float(now))
    return follower, setter.calls


def test_a_spinning_process_sleeps_once_the_load_stays():
    """Started on free cores, then loaded: sleeping at the second busy look in a
    row, not at a moment's burst; spinning again once two looks are quiet."""
    with pytest.MonkeyPatch.context() as patch:
        follower, calls = _follower(patch, idle_workers.SPIN_MS,
                                    [True, False, True, True, True, False, False])
    assert calls == [idle_workers.SLEEP_MS, idle_workers.SPIN_MS]
    assert follower.active == idle_workers.SPIN_MS


def test_the_users_blocktime_is_never_changed(monkeypatch):
    follower, calls = _follower(monkeypatch, None, [True, True, True])
    assert follower.active is None and calls == []


def test_the_load_is_looked_at_twice_a_second_at_most(monkeypatch):
    looks = []
    monkeypatch.setattr(idle_workers._FOLLOWER, "look", lambda now: looks.append(now) or
                        setattr(idle_workers._FOLLOWER, "next_look", now + idle_workers.LOOK_EVERY_S))
    monkeypatch.setattr(idle_workers._FOLLOWER, "next_look", 0.0)
    clock = iter([10.0, 10.1, 10.4, 10.5, 10.6, 11.2])
    monkeypatch.setattr(idle_workers.time, "monotonic", lambda: next(clock))
    for _ in range(6):
        idle_workers.follow_load()
    assert looks == [10.0, 10.5, 11.2]


@pytest.mark.parametrize("running, own, busy", [(3, 2, False), (3, 1, True), (4, 2, True)])
def test_this_processes_running_threads_are_not_load(monkeypatch, running, own, busy):
    """A worker spinning is a running task of ours, not another process's."""
    _fake_loadavg(monkeypatch, running)
    monkeypatch.setattr(idle_workers.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(idle_workers, "_own_running_threads", lambda: own)
    assert idle_workers.cores_busy_elsewhere() is busy


def test_own_running_threads_include_this_one():
    assert idle_workers._own_running_threads() >= 1


def test_a_library_not_in_the_process_is_not_followed(monkeypatch):
    """A loaded artifact's libiomp5 is followed only where it is loaded: the
    check loads nothing."""
    started = []
    monkeypatch.setattr(idle_workers, "start_following", lambda *args: started.append(args))
    idle_workers.follow_if_loaded(1, soname="libxlac-no-such-library.so")
    assert started == []
    idle_workers.follow_if_loaded(1, soname="libc.so.6")
    assert started == [("libc.so.6", 1)]


def test_started_once():
    """A second start (a loaded artifact after the JIT) keeps the blocktime in force."""
    follower = idle_workers._Follower()
    follower.start("libc.so.6", 1)
    follower.set_blocktime = _Setter()
    follower.active = 0
    follower.start("libc.so.6", 1)
    assert follower.active == 0
