"""The runtime libraries a compile links against, found without the costly
look-ups: libiomp5 from its wheel's RECORD (no ``importlib.metadata``), libm's
soname once per process (``find_library`` runs ``ldconfig -p`` each call)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from xlac.targets.cpu import libraries


def _dist_info(site, name: str, record: str):
    info = site / name
    info.mkdir(parents=True)
    (info / "RECORD").write_text(record)
    return info


def test_a_file_is_found_where_its_record_puts_it(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    _dist_info(site, "Some_Package-1.0.dist-info",
               "some_package/__init__.py,sha256=x,1\n"
               "../../libsome.so,sha256=y,2\n"
               '"odd,name/libother.so",sha256=z,3\n')
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(site)])
    assert libraries.installed_file("some-package", "libsome.so") == str(tmp_path.parent / "libsome.so")
    assert libraries.installed_file("some-package", "libother.so") == str(site / "odd,name" / "libother.so")
    assert libraries.installed_file("some-package", "libnone.so") is None
    assert libraries.installed_file("other-package", "libsome.so") is None


def test_the_first_distribution_on_the_path_is_read(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    _dist_info(first, "pkg-2.0.dist-info", "lib/libx.so,,\n")
    _dist_info(second, "pkg-1.0.dist-info", "other/libx.so,,\n")
    monkeypatch.setattr(sys, "path", [str(first), str(second)])
    assert libraries.installed_file("pkg", "libx.so") == str(first / "lib" / "libx.so")


def test_the_record_finds_what_importlib_metadata_finds():
    found = libraries.installed_file("intel-openmp", "libiomp5.so")
    if found is None:
        pytest.skip("intel-openmp is not installed as a .dist-info")
    assert found == libraries._metadata_file("intel-openmp", "libiomp5.so")


def test_loading_openmp_does_not_import_package_metadata():
    probe = ("import sys\nfrom xlac.targets.cpu import libraries\n"
             "path = libraries._load_openmp()\n"
             "print(path is not None, 'importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    if out[0] != "True":
        pytest.skip("no libiomp5 installed")
    assert out[1] == "False"


def test_libm_is_looked_up_once_per_process(monkeypatch):
    import ctypes.util
    calls = []
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: calls.append(name) or "libm.so.6")
    libraries._libm.cache_clear()
    try:
        assert libraries._libm() == libraries._libm() == "libm.so.6"
        assert calls == ["m"]
    finally:
        libraries._libm.cache_clear()


def test_a_version_is_read_from_the_dist_info_metadata(tmp_path, monkeypatch):
    from xlac import distributions
    info = _dist_info(tmp_path, "Torch_MLIR-7.dist-info", "")
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: torch-mlir\nVersion: 20261001\n\n"
                                   "Version: not a header\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path)])
    assert distributions.version("torch-mlir") == "20261001"
    assert distributions.version("torch.mlir") == "20261001"              # names compared normalized
    assert distributions.version("torch-mlir-extra") is None


def test_every_installed_version_is_what_importlib_metadata_reads():
    from importlib import metadata

    from xlac import distributions
    for found in metadata.distributions():
        name = found.metadata["Name"]
        assert distributions.version(name) in (None, metadata.version(name)), name
    assert distributions.version("torch-mlir") == metadata.version("torch-mlir")


def test_the_build_identity_imports_no_package_metadata():
    probe = ("import sys\nfrom xlac.cache import identity\nidentity._computed()\n"
             "print('importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]
