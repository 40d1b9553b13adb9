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

from xlac.targets.cpu import libraries


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


def test_set_before_the_first_parallel_region():
    """A fresh process that compiles and runs a parallel program has chosen
    by then (libiomp5 reads it once, at its first region)."""
    code = ("import os, numpy as np, xlac\n"
            "exe = xlac.compile('func.func @main(%a: tensor<1048576xf32>) -> tensor<1048576xf32> {\\n"
            "  %0 = stablehlo.exponential %a : tensor<1048576xf32>\\n"
            "  return %0 : tensor<1048576xf32>\\n}', cache=False)\n"
            "exe(np.ones(1048576, np.float32))\n"
            "print(os.environ['KMP_BLOCKTIME'])\n")
    env = {k: v for k, v in os.environ.items() if k != "KMP_BLOCKTIME"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in ("0", libraries.SPIN_MS)
