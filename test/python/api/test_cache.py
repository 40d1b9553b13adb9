"""The persistent compilation cache: hits, misses and their reasons, bad
entries ignored and rebuilt, a private directory, fast hits."""

from __future__ import annotations

import logging
import os
import stat

import numpy as np
import pytest

import xlac
from conftest import require_shared
from xlac import cache

PROGRAM = """func.func @main(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  %0 = stablehlo.add %a, %bb : tensor<3x4xf32>
  %1 = stablehlo.exponential %0 : tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}
"""
OTHER = PROGRAM.replace("exponential", "sine")
A = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
B = np.linspace(-1, 1, 4, dtype=np.float32)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("XLAC_CACHE_DIR", str(directory))
    return directory


def compile_logged(caplog, source=PROGRAM, **kwargs):
    """Compile (waiting for the entry to be written); the cache's log lines."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="xlac.cache"):
        exe = xlac.compile(source, **kwargs)
        cache.flush()
    return exe, [r.getMessage() for r in caplog.records if r.name == "xlac.cache"]


def entries(directory):
    """One name per entry: an entry stored under its input's key and its program's
    key is one file with two names."""
    by_inode = {}
    for path in sorted(directory.glob("*.xlac")):
        by_inode.setdefault(path.stat().st_ino, path)
    return sorted(by_inode.values())


def test_miss_then_hit_with_one_line_each(cache_dir, caplog):
    cold, lines = compile_logged(caplog)
    assert len(lines) == 1 and "miss" in lines[0] and lines[0].endswith("no entry")
    warm, lines = compile_logged(caplog)
    assert len(lines) == 1 and "hit" in lines[0]
    np.testing.assert_array_equal(warm(A, B), cold(A, B))
    np.testing.assert_allclose(warm(A, B), np.exp(A + B), rtol=1e-6)
    assert "linalg.generic" in warm.as_text("linalg")       # stages come from the input


def test_directory_is_private_and_holds_only_whole_entries(cache_dir, caplog):
    compile_logged(caplog)
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    files = [p for p in cache_dir.iterdir() if p.name != "build-identity.json"]
    assert {p.suffix for p in files} == {".xlac"} and len(entries(cache_dir)) == 1
    assert stat.S_IMODE(entries(cache_dir)[0].stat().st_mode) == 0o600


def test_locations_do_not_change_the_key(cache_dir, caplog):
    compile_logged(caplog)
    _, lines = compile_logged(caplog, "// the same program, moved\n\n" + PROGRAM)
    assert "hit" in lines[0]


def test_options_and_programs_change_the_key(cache_dir, caplog):
    compile_logged(caplog)
    for source, kwargs in [(OTHER, {}), (PROGRAM, {"disable_passes": ("cse",)})]:
        _, lines = compile_logged(caplog, source, **kwargs)
        assert "miss" in lines[0]
    assert len(entries(cache_dir)) == 3


@pytest.mark.parametrize("damage, reason", [
    (lambda data: data[: len(data) // 3], "checksum mismatch"),
    (lambda data: data[:-200] + bytes([data[-200] ^ 0x40]) + data[-199:], "checksum mismatch"),
    (lambda data: b"", "not an xlac cache entry"),
    (lambda data: data.replace(b'"keys"', b'"kays"', 1), "malformed header"),
])
def test_damaged_entry_is_ignored_and_rebuilt(cache_dir, caplog, damage, reason):
    compile_logged(caplog)
    [entry] = entries(cache_dir)
    entry.write_bytes(damage(entry.read_bytes()))
    exe, lines = compile_logged(caplog)
    assert len(lines) == 1 and "miss" in lines[0] and reason in lines[0], lines
    np.testing.assert_allclose(exe(A, B), np.exp(A + B), rtol=1e-6)
    _, lines = compile_logged(caplog)
    assert "hit" in lines[0]                                   # rebuilt


def test_foreign_entry_is_not_loaded(cache_dir, caplog):
    compile_logged(caplog, OTHER)
    [other] = entries(cache_dir)
    compile_logged(caplog)
    [mine] = [e for e in entries(cache_dir) if e != other]
    mine.write_bytes(other.read_bytes())                       # sine's code under exp's key
    exe, lines = compile_logged(caplog)
    assert "made for another key" in lines[0]
    np.testing.assert_allclose(exe(A, B), np.exp(A + B), rtol=1e-6)


def test_entry_writable_by_others_is_not_loaded(cache_dir, caplog):
    compile_logged(caplog)
    [entry] = entries(cache_dir)
    os.chmod(entry, 0o666)
    _, lines = compile_logged(caplog)
    assert "writable by another user" in lines[0]


def test_shared_directory_turns_the_cache_off(cache_dir, caplog):
    cache_dir.mkdir(mode=0o777)
    os.chmod(cache_dir, 0o777)
    _, lines = compile_logged(caplog)
    assert lines == [f"xlac cache off: {cache_dir} is writable by other users (chmod 700 it)"]
    assert entries(cache_dir) == []


def test_empty_value_turns_the_cache_off(monkeypatch, caplog, tmp_path):
    monkeypatch.setenv("XLAC_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    _, lines = compile_logged(caplog)
    assert lines == [] and list(tmp_path.iterdir()) == []


def test_default_directory_is_under_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("XLAC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert xlac.Options.from_env().cache_dir == tmp_path / "xlac"


@pytest.mark.parametrize("name", ["softmax", "mlp"])
def test_a_hit_runs_no_pass_and_no_jit(cache_dir, caplog, monkeypatch, name):
    """What makes a hit fast, checked without a clock (timing tests flake on busy machines)."""
    from xlac.pipeline.runner import StageRunner
    path = require_shared("bench", "suite", f"{name}.stablehlo.mlir")
    cold, _ = compile_logged(caplog, path)
    monkeypatch.setattr(StageRunner, "run", lambda *a: pytest.fail("a hit ran a pipeline stage"))
    warm, lines = compile_logged(caplog, path)
    assert "hit" in lines[0]
    inputs = [np.ones(s.shape, s.dtype) for s in warm.signature.inputs]
    for got, want in zip(warm.run(*inputs), cold.run(*inputs)):
        np.testing.assert_array_equal(got, want)



def test_an_empty_cache_dir_in_options_means_no_cache(tmp_path, monkeypatch):
    """Options(cache_dir="") is XLAC_CACHE_DIR= : no cache (Path("") would be the cwd)."""
    monkeypatch.chdir(tmp_path)
    options = xlac.Options(cache_dir="", progress="off")
    assert options.cache_dir is None and xlac.Options(cache_dir="~").cache_dir.is_absolute()
    xlac.compile("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                 "  return %x : tensor<4xf32>\n}", options=options)
    assert not list(tmp_path.iterdir())


def test_a_hit_loads_from_a_view_and_serializes_to_bytes(cache_dir, caplog):
    """The input-key hit reads the entry once and loads the library from a view
    of it; what the executable serializes is still bytes, the stored payload."""
    compile_logged(caplog)
    exe, log = compile_logged(caplog)
    assert any("hit" in line for line in log), log
    blob = exe.serialize()
    assert isinstance(blob, bytes)
    [entry] = entries(cache_dir)
    store = cache.CompilationCache.open(cache_dir)
    view = store.get_view(entry.stem, "test")
    assert isinstance(view, memoryview) and bytes(view) == store.get(entry.stem, "test")
    np.testing.assert_allclose(exe(A, B), np.exp(A + B), rtol=1e-6)
