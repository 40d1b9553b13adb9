"""xlac.load and xlac.deserialize trust only what xlac wrote.

Each attack is a file or blob made to get past a check: libraries that run
code when opened (a constructor, an IFUNC resolver, a needed library named
by path, a search path others can write) under real xlac metadata with the
checksum recomputed; malformed metadata with the checksum recomputed; another
build identity; files that are not artifacts (FIFO, directory, device, huge
sparse file, garbage, an ELF for another machine). Every one must be refused
with an ArtifactError, before any of its code runs: the forged libraries
write a marker file when opened, and the marker must be absent.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading

import numpy as np
import pytest
from forgery import CONSTRUCTOR, IFUNC, PLAIN, build, raw_metadata, repack, with_entry

import xlac
from xlac.artifact import container

PROGRAM = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""


@pytest.fixture(scope="module")
def blob():
    return xlac.compile(PROGRAM, cache=False).serialize()


@pytest.fixture(scope="module")
def forged(blob, tmp_path_factory):
    """(the forged libraries, the marker they write when opened)."""
    directory = tmp_path_factory.mktemp("forged")
    marker = directory / "marker"
    return library_attacks(blob, directory, marker), marker


def symbol(blob: bytes) -> str:
    return container.unpack(blob)[1]["entries"]["main"]["symbol"]


def library_attacks(blob, tmp_path, marker):
    """Libraries that would run code as they are opened, with xlac's metadata."""
    name = symbol(blob)
    evil_dir = tmp_path / "open"
    evil_dir.mkdir()
    evil_dir.chmod(0o777)
    evil = build(tmp_path, CONSTRUCTOR, marker, "unused", "-Wl,-soname,libevil.so")
    (evil_dir / "libevil.so").write_bytes(evil)
    (tmp_path / "libbypath.so").write_bytes(build(tmp_path, CONSTRUCTOR, marker, "unused"))
    return {
        "constructor": build(tmp_path, CONSTRUCTOR, marker, name),
        "constructor without start files": build(tmp_path, CONSTRUCTOR, marker, name,
                                                 "-nostartfiles"),
        "ifunc resolver": build(tmp_path, IFUNC, marker, name, "-nostartfiles"),
        "needed library by path": build(tmp_path, PLAIN, marker, name, "-nostartfiles",
                                        "-Wl,--no-as-needed",
                                        str(tmp_path / "libbypath.so")),
        "search path others can write": build(tmp_path, PLAIN, marker, name, "-nostartfiles",
                                              "-Wl,--no-as-needed",
                                              f"-L{evil_dir}", "-levil",
                                              f"-Wl,-rpath,{evil_dir}"),
    }


def test_forged_libraries_would_run_code(forged, tmp_path):
    """The control: opened directly (in another process), every forged library
    does write its marker."""
    attacks, marker = forged
    for name, library in attacks.items():
        marker.unlink(missing_ok=True)
        path = tmp_path / f"control-{len(name)}.so"
        path.write_bytes(library)
        subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(path)!r})"],
                       check=True)
        assert marker.exists(), name


@pytest.mark.parametrize("how", ["deserialize", "load"])
def test_forged_libraries_are_refused_before_they_run(blob, forged, tmp_path, how):
    attacks, marker = forged
    for name, library in attacks.items():
        marker.unlink(missing_ok=True)
        with pytest.raises(xlac.ArtifactError, match="xlac did not link|not a library") as info:
            _open(repack(blob, library), tmp_path, how)
        assert not marker.exists(), f"{name}: its code ran before the refusal"
        assert "Recompile" in str(info.value) or "not a library" in str(info.value)
    assert len(attacks) == 5


METADATA_ATTACKS = {
    "a list": b"[]", "a string": b'"x"', "cut JSON": b"{", "null": b"null",
    "deep nesting": b"[" * 100000 + b"]" * 100000,
}
FIELD_ATTACKS = {
    "no entries": {"entries": None}, "entries a list": {"entries": []},
    "no format": {"format": None}, "format a string": {"format": "1"},
    "features not names": {"cpu_features": [1]}, "features a string": {"cpu_features": "avx2"},
    "reports a list": {"fusion_reports": []}, "entry a list": {"entries": {"main": []}},
}
ENTRY_ATTACKS = {
    "symbol a shell command": {"symbol": "x; rm -rf /"}, "symbol a number": {"symbol": 5},
    "inputs a string": {"inputs": "x"}, "negative dimension": {"inputs": [{"shape": [-1],
                                                                          "type": "f32"}]},
    "dimension a string": {"inputs": [{"shape": ["4"], "type": "f32"}]},
    "exabyte shape": {"outputs": [{"shape": [1 << 30] * 3, "type": "f32"}]},
    "unknown type": {"inputs": [{"shape": [4], "type": "f33"}]},
    "spec a list": {"outputs": [[4]]}, "bad grid": {"spmd": [0, 1]},
}
IDENTITY_ATTACKS = {
    "modified xlac": ({"xlac_build": "0" * 16}, "xlac sources with digest"),
    "other torch-mlir": ({"torch_mlir": "0.0.1"}, "torch-mlir"),
    "other xlac version": ({"xlac": "0.0.0"}, "xlac version"),
    "other machine": ({"machine": "sparc"}, "machine"),
    "other format": ({"format": 2}, "artifact format"),
    "other target": ({"target": "cuda"}, "target"),
    "missing CPU features": ({"cpu_features": ["avx512f", "amx-tile"]}, "lacks"),
}


def metadata_attacks(blob):
    attacks = {name: raw_metadata(blob, text) for name, text in METADATA_ATTACKS.items()}
    attacks |= {name: repack(blob, **fields) for name, fields in FIELD_ATTACKS.items()}
    attacks |= {name: with_entry(blob, **fields) for name, fields in ENTRY_ATTACKS.items()}
    return attacks


@pytest.mark.parametrize("how", ["deserialize", "load"])
def test_malformed_metadata_is_refused_not_a_traceback(blob, tmp_path, how):
    attacks = metadata_attacks(blob)
    for name, forged in attacks.items():
        with pytest.raises(xlac.ArtifactError, match="metadata") as info:
            _open(forged, tmp_path, how)
        assert "Traceback" not in str(info.value), name
    assert len(attacks) == 22


@pytest.mark.parametrize("name", IDENTITY_ATTACKS)
def test_another_build_is_refused_saying_what_differs(blob, tmp_path, name):
    fields, differs = IDENTITY_ATTACKS[name]
    with pytest.raises(xlac.ArtifactError, match="made elsewhere") as info:
        _open(repack(blob, **fields), tmp_path, "load")
    assert differs in str(info.value) and "Recompile it here with xla-compile" in str(info.value)


def elf_attacks(blob):
    library, _ = container.unpack(blob)
    other_machine = library[:18] + struct.pack("<H", 183 if library[18] == 62 else 62) + \
        library[20:]
    executable = library[:16] + struct.pack("<H", 2) + library[18:]
    headers_outside = library[:32] + struct.pack("<Q", len(library) * 2) + library[40:]
    return {"garbage": b"garbage" * 10, "another machine": other_machine,
            "an executable": executable, "headers outside": headers_outside,
            "32-bit": library[:4] + b"\x01" + library[5:], "truncated": library[:200]}


@pytest.mark.parametrize("name", ["garbage", "another machine", "an executable",
                                  "headers outside", "32-bit", "truncated"])
def test_not_a_library_for_this_machine(blob, tmp_path, name):
    with pytest.raises(xlac.ArtifactError, match="not a library xlac made"):
        _open(repack(blob, elf_attacks(blob)[name]), tmp_path, "deserialize")


def test_files_that_are_not_artifacts_are_not_read(tmp_path):
    fifo = tmp_path / "fifo.so"
    os.mkfifo(fifo)
    sparse = tmp_path / "sparse.so"
    with open(sparse, "wb") as handle:
        handle.truncate(20 << 30)               # 20 GiB of holes: reading would fill memory
    holes = tmp_path / "holes.so"
    with open(holes, "wb") as handle:
        handle.truncate(2 << 30)                # under the size limit, still not read
    device = tmp_path / "zero.so"
    device.symlink_to("/dev/zero")
    cases = {fifo: "not a regular file", tmp_path: "not a regular file",
             device: "not a regular file", sparse: "more than", holes: "sparse"}
    for path, reason in cases.items():
        result = []
        thread = threading.Thread(target=lambda p=path, r=result: r.append(_refusal(p)), daemon=True)
        thread.start()
        thread.join(30)
        assert not thread.is_alive(), f"{path.name}: xlac.load hangs"
        assert isinstance(result[0], xlac.ArtifactError) and reason in str(result[0]), result


def test_an_intact_artifact_still_loads(blob, tmp_path):
    path = tmp_path / "good.so"
    path.write_bytes(blob)
    np.testing.assert_array_equal(xlac.load(path)(np.ones(4, np.float32)), np.full(4, 2.0))


def _refusal(path):
    try:
        xlac.load(path)
    except Exception as error:  # noqa: BLE001 - the test looks at which
        return error
    return None


def _open(blob: bytes, tmp_path, how: str):
    if how == "deserialize":
        return xlac.deserialize(blob)
    path = tmp_path / "artifact.so"
    path.write_bytes(blob)
    return xlac.load(path)


def test_the_check_reads_a_view_as_it_reads_bytes(blob, tmp_path):
    """A cache hit checks its library as a view into the entry read (no copy):
    the same findings, strings longer than one read window included."""
    from xlac.artifact.elf import load_time_code
    long_dir = tmp_path / ("d" * 200) / ("e" * 200) / "open"
    long_dir.mkdir(parents=True)
    long_dir.chmod(0o777)                   # others can write it: the check names it
    library = build(tmp_path, PLAIN, tmp_path / "marker", symbol(blob), "-nostartfiles",
                    f"-Wl,-rpath,{long_dir}")
    found = load_time_code(library)
    assert load_time_code(memoryview(library)) == found
    assert any(str(long_dir) in line for line in found), found
