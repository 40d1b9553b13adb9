"""The cache's background writes: a look-up of a key still queued writes it
itself instead of waiting behind every earlier write, each write runs once,
and eviction scans the directory only when its running total passes the limit."""

from __future__ import annotations

import threading

from xlac import cache


def open_cache(tmp_path, **kwargs):
    store = cache.CompilationCache.open(tmp_path / "cache")
    assert store is not None
    if kwargs:
        store = cache.CompilationCache(store.directory, **kwargs)
    return store


def test_a_look_up_takes_its_write_off_the_queue(tmp_path):
    store = open_cache(tmp_path)
    release = threading.Event()

    def slow() -> bytes:              # a long link ahead in the queue
        assert release.wait(30)
        return b"first"

    store.put(["k1"], slow, "slow")
    store.put(["k2"], lambda: b"second", "quick")
    assert store.get("k2", "quick") == b"second"     # the writer is still in slow()
    assert not release.is_set()
    release.set()
    cache.flush()
    assert store.get("k1", "slow") == b"first"


def test_each_write_runs_once(tmp_path):
    store = open_cache(tmp_path)
    calls = []

    def produce() -> bytes:
        calls.append(threading.current_thread().name)
        return b"payload"

    for round_ in range(20):
        store.put([f"a{round_}", f"b{round_}"], produce, "once")
        assert store.get(f"b{round_}", "once") == b"payload"
    cache.flush()
    assert len(calls) == 20
    assert all(store.get(f"a{r}", "once") == b"payload" for r in range(20))


def test_eviction_keeps_the_limit_and_scans_rarely(tmp_path, monkeypatch):
    scans = []
    evict = cache._evict

    def counted(directory, limit):
        scans.append(directory)
        return evict(directory, limit)

    monkeypatch.setattr(cache, "_evict", counted)
    store = open_cache(tmp_path, max_bytes=20_000)
    for number in range(100):
        store.put([f"key{number}"], lambda: bytes(1000), "sized")
    cache.flush()
    held = sum(path.stat().st_size for path in store.directory.glob("*.xlac"))
    assert 0 < held <= 20_000
    assert store.get("key99", "sized") == bytes(1000)      # the newest stay
    assert store.get("key0", "sized") is None               # the oldest went
    assert 3 <= len(scans) <= 50, len(scans)  # a first scan, then one per ~2 KB over
