"""xlac.files.built_library: a C helper built once per content, where only this user writes."""

from __future__ import annotations

import ctypes
import os
import stat

import pytest

from xlac.files import built_library, find_c_compiler

needs_cc = pytest.mark.skipif(find_c_compiler() is None, reason="no C compiler (cc, gcc, clang)")


@needs_cc
def test_built_once_per_content_in_a_private_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)      # gettempdir() reads TMPDIR again
    source = tmp_path / "answer.c"
    source.write_text("int answer(void) { return 42; }\n")
    first = built_library(source)
    assert ctypes.CDLL(str(first)).answer() == 42
    built_at = first.stat().st_mtime_ns
    assert built_library(source) == first and first.stat().st_mtime_ns == built_at   # not rebuilt
    mode = first.parent.stat().st_mode
    assert first.parent.stat().st_uid == os.getuid() and not mode & (stat.S_IRWXG | stat.S_IRWXO)
    source.write_text("int answer(void) { return 7; }\n")
    second = built_library(source)
    assert second != first and ctypes.CDLL(str(second)).answer() == 7


@needs_cc
def test_a_directory_others_can_write_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    shared = tmp_path / f"xlac-built-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    source = tmp_path / "x.c"
    source.write_text("int x(void) { return 1; }\n")
    with pytest.raises(ValueError, match="writable by other users"):
        built_library(source)
