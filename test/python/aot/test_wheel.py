"""The package as users get it (issue 14, stumbles 1 and 9): a wheel with
everything it needs (CPU schedules, the CMake helper), installed into a fresh
venv and used from another directory, the CMake helper found from the
installed package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

PROGRAM = """func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.tanh %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                           str(out), str(REPO)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [found] = out.glob("xlac-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel; its dependencies are this venv's (a .pth
    line), not reinstalled, and the source tree is not on its path."""
    venv = tmp_path_factory.mktemp("venv") / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True).stdout
    Path(site.strip(), "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def test_the_wheel_carries_what_the_package_reads(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("xlac/passes/cpu/schedules/") and n.endswith(".mlir") for n in names)
    assert "xlac/cmake/XlacAot.cmake" in names and "xlac/cmake/XlacConfig.cmake" in names
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA")))
    assert b"Requires-Python: <3.14,>=3.11" in metadata
    assert not any(n.startswith(("test/", "python/")) for n in names)


def test_installed_package_compiles_from_another_directory(installed, tmp_path):
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "model.mlir").write_text(PROGRAM)
    script = ("import numpy as np, xlac\n"
              "print(xlac.__file__)\n"
              "exe = xlac.compile('model.mlir')\n"
              "x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)\n"
              "np.testing.assert_allclose(exe(x), np.tanh(x), rtol=1e-6)\n"
              "print(exe.signature)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    done = subprocess.run([str(installed / "bin" / "python"), "-c", script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    where, signature = done.stdout.split()[0], done.stdout.splitlines()[1]
    assert where.startswith(str(installed)) and signature == "(f32[2,3]) -> (f32[2,3])"
    run = subprocess.run([str(installed / "bin" / "xla-run"), "model.mlir", "--input=2x3xf32=0"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and "result[0]: 2x3xf32=[0 0 0][0 0 0]" in run.stdout, run.stderr


def test_cmake_finds_the_helper_in_the_installed_package(installed, tmp_path):
    cmake = shutil.which("cmake")
    if cmake is None or shutil.which("cc") is None:
        pytest.skip("cmake or a C compiler is not installed")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    cmake_dir = subprocess.run([str(installed / "bin" / "xla-compile"), "--cmake-dir"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip()
    assert cmake_dir.startswith(str(installed)) and Path(cmake_dir, "XlacConfig.cmake").exists()
    source = tmp_path / "app"
    shutil.copytree(REPO / "examples" / "aot_c", source)
    build = tmp_path / "build"
    for command in ([cmake, "-S", str(source), "-B", str(build), f"-DXlac_DIR={cmake_dir}"],
                    [cmake, "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cache = (build / "CMakeCache.txt").read_text()
    assert f"XLAC_COMPILE:FILEPATH={installed}" in cache.replace(str(installed.resolve()),
                                                                 str(installed))
    run = subprocess.run([str(build / "aot_example")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.startswith("entry main: 3 inputs"), run.stderr
