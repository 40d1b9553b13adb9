"""The compilation cache trusts only entries xlac wrote for the key asked.

Each attack puts something under the key a compile will look up: another
program's entry (checksum recomputed), malformed artifact metadata (both
checksums recomputed), a library that runs code when opened, another build's
entry, and things that are no entry at all (FIFO, directory, device, symlink
out of the cache, huge sparse files). Every one must be a logged miss and a
rebuild giving the right result, without hanging, without a traceback and
without running the planted code. Also: stale work directories are swept,
reproducer folders are bounded.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac import cache, compiler, record
from xlac.artifact import container
from xlac.files import STALE_SECONDS, keep_newest, sweep_stale_work_directories
from xlac.targets import get_target

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "aot"))
from forgery import CONSTRUCTOR, build, raw_metadata, repack, with_entry  # noqa: E402

PROGRAM = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
OTHER = PROGRAM.replace("exponential", "negate")
X = np.linspace(-1, 1, 4, dtype=np.float32)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("XLAC_CACHE_DIR", str(directory))
    # one name per entry: the first-level key of the input's bytes (a hard
    # link to the same file, read by the same CompilationCache.get) is off,
    # so each attack below reaches the one name it plants
    monkeypatch.setattr(compiler, "get_target",
                        lambda name: record.replace(get_target(name), input_keyed=False))
    return directory


def entry_of(source, directory) -> tuple[Path, bytes]:
    """Compile ``source`` into the cache: its entry's path and its payload."""
    before = set(directory.glob("*.xlac")) if directory.exists() else set()
    xlac.compile(source)
    cache.flush()
    (path,) = set(directory.glob("*.xlac")) - before
    header, payload = path.read_bytes().split(b"\n", 1)
    return path, payload


def entry(keys: list[str], payload: bytes) -> bytes:
    """A well-formed cache entry: header naming ``keys``, checksum right."""
    header = {"keys": keys, "sha256": hashlib.sha256(payload).hexdigest(), "size": len(payload)}
    return b"XLACCACHE2 " + json.dumps(header, sort_keys=True).encode() + b"\n" + payload


def plant(path: Path, data: bytes) -> None:
    path.unlink(missing_ok=True)
    path.write_bytes(data)
    path.chmod(0o600)


def recompiles_right(caplog, reason: str = "") -> None:
    """The next compile misses (logging ``reason``), rebuilds, and is right."""
    caplog.clear()
    result = []
    with caplog.at_level(logging.INFO, logger="xlac.cache"):
        thread = threading.Thread(target=lambda: result.append(xlac.compile(PROGRAM)(X)),
                                  daemon=True)
        thread.start()
        thread.join(60)
        assert not thread.is_alive(), "the compile hangs"
        cache.flush()
    lines = [r.getMessage() for r in caplog.records if r.name == "xlac.cache"]
    assert any("miss" in line and reason in line for line in lines), lines
    np.testing.assert_allclose(result[0], np.exp(X), rtol=1e-6)


def test_another_programs_entry_under_the_key_is_a_miss(cache_dir, caplog):
    mine, _ = entry_of(PROGRAM, cache_dir)
    theirs, payload = entry_of(OTHER, cache_dir)
    their_keys = json.loads(theirs.read_bytes().split(b"\n", 1)[0][len(b"XLACCACHE2 "):])["keys"]
    plant(mine, entry(their_keys, payload))              # checksum recomputed: still theirs
    recompiles_right(caplog, "made for another key")


def metadata_attacks(payload: bytes) -> dict[str, bytes]:
    """One of each class (test_trust.py tries every form on the same checks)."""
    return {"metadata a list": raw_metadata(payload, b"[]"),
            "symbol a shell command": with_entry(payload, symbol="x; reboot"),
            "modified xlac": repack(payload, xlac_build="0" * 16),
            "other torch-mlir": repack(payload, torch_mlir="0.0.1")}


def test_malformed_or_foreign_metadata_is_a_miss(cache_dir, caplog):
    path, payload = entry_of(PROGRAM, cache_dir)
    key = path.name.removesuffix(".xlac")
    for name, forged in metadata_attacks(payload).items():
        plant(path, entry([key], forged))
        recompiles_right(caplog, "unusable entry")
        assert path.read_bytes().split(b"\n", 1)[1] != forged, f"{name}: not rebuilt"


def test_a_planted_library_is_never_opened(cache_dir, caplog, tmp_path):
    path, payload = entry_of(PROGRAM, cache_dir)
    key = path.name.removesuffix(".xlac")
    marker = tmp_path / "marker"
    symbol = container.unpack(payload)[1]["entries"]["main"]["symbol"]
    forged = repack(payload, build(tmp_path, CONSTRUCTOR, marker, symbol))
    plant(path, entry([key], forged))
    recompiles_right(caplog, "xlac did not link")
    assert not marker.exists()


def not_entries(path: Path, tmp_path: Path) -> dict[str, callable]:
    """Ways to put something that is no entry at ``path``."""
    outside = tmp_path / "outside.xlac"
    outside.write_bytes(path.read_bytes())
    outside.chmod(0o600)

    def sparse(size):
        def make():
            with open(path, "wb") as handle:
                handle.truncate(size)
            path.chmod(0o600)
        return make
    return {"fifo": lambda: os.mkfifo(path, 0o600), "directory": lambda: path.mkdir(0o700),
            "device": lambda: path.symlink_to("/dev/zero"),
            "symlink out of the cache": lambda: path.symlink_to(outside),
            "1.5 GiB sparse": sparse(3 << 29), "3 GiB sparse": sparse(3 << 30)}


def test_things_that_are_no_entry_are_not_read(cache_dir, caplog, tmp_path):
    path, _ = entry_of(PROGRAM, cache_dir)
    for name, make in not_entries(path, tmp_path).items():
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink(missing_ok=True)
        make()
        start = time.perf_counter()
        recompiles_right(caplog, "bad entry")
        assert time.perf_counter() - start < 30, name


def test_stale_work_directories_are_swept(tmp_path):
    old, fresh, other = (tmp_path / "xlac-link-old", tmp_path / "xlac-link-new",
                         tmp_path / "unrelated-old")
    for directory in (old, fresh, other):
        directory.mkdir()
        (directory / "x.o").write_bytes(b"x")
    hour_ago = time.time() - STALE_SECONDS - 60
    for directory in (old, other):
        os.utime(directory, (hour_ago, hour_ago))
    assert sweep_stale_work_directories(tmp_path) == 1
    assert not old.exists() and fresh.exists() and other.exists()


def test_reproducer_folders_are_bounded(tmp_path):
    for index in range(30):
        folder = tmp_path / f"r{index:02d}"
        folder.mkdir()
        os.utime(folder, (1000 + index, 1000 + index))
    keep_newest(tmp_path, 16)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"r{i:02d}" for i in range(14, 30)]
