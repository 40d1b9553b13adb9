"""Ahead-of-time artifacts: xla-compile, the C example built with CMake,
xlac.load, serialize/deserialize, and refusing artifacts from elsewhere."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlac
from conftest import REPO
from xlac.artifact import container as artifact

BIN = Path(sys.executable).parent
TWO_ENTRIES = """
func.func public @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %x, %y : tensor<4xf32>
  %1 = stablehlo.tanh %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func public @total(%x: tensor<2x3xi32>) -> (tensor<i32>, tensor<2x3xi32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 1]
      : (tensor<2x3xi32>, tensor<i32>) -> tensor<i32>
  %n = stablehlo.negate %x : tensor<2x3xi32>
  return %s, %n : tensor<i32>, tensor<2x3xi32>
}
"""
X = np.linspace(-2, 2, 4, dtype=np.float32)
Y = np.linspace(0.5, 1.5, 4, dtype=np.float32)
M = np.arange(6, dtype=np.int32).reshape(2, 3)


def xla_compile(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "xla-compile"), *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    """libdemo.so with entries main and total, and demo.h beside it."""
    work = tmp_path_factory.mktemp("aot")
    (work / "demo.mlir").write_text(TWO_ENTRIES)
    done = xla_compile(str(work / "demo.mlir"), "-o", str(work / "libdemo.so"),
                       "--header", str(work / "demo.h"), "--entry", "main,total")
    assert done.returncode == 0, done.stderr
    return work / "libdemo.so"


def test_header_declares_each_entry_and_its_signature(library):
    header = library.with_name("demo.h").read_text()
    assert "int demo_main(const void *const *inputs, void *const *outputs);" in header
    assert "const xlac_signature *demo_total_signature(void);" in header
    assert "#define DEMO_TOTAL_NUM_OUTPUTS 2" in header
    assert "inputs[0]:  s32[2,3], 24 bytes" in header


def test_library_exports_only_the_c_api(library):
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    listing = subprocess.run([nm, "-D", "--defined-only", str(library)], capture_output=True,
                             text=True, check=True).stdout
    exported = sorted(line.split()[-1] for line in listing.splitlines() if " T " in line)
    assert exported == ["demo_main", "demo_main_signature", "demo_total",
                        "demo_total_signature"]


def test_load_runs_each_entry_without_mlir(library):
    main = xlac.load(library)
    np.testing.assert_allclose(main(X, Y), np.tanh(X * Y), rtol=1e-6, atol=1e-6)
    total, negated = xlac.load(library, entry="total")(M)
    assert int(total) == M.sum() and np.array_equal(negated, -M)
    assert str(main.signature) == "(f32[4], f32[4]) -> (f32[4])"


def test_loaded_executable_checks_inputs_and_has_no_stages(library):
    main = xlac.load(library)
    with pytest.raises(xlac.InputError, match=r"argument 1 compiled for f32\[4\]"):
        main(X, np.zeros(5, np.float32))
    with pytest.raises(xlac.CompileError, match="loaded from"):
        main.as_text("linalg")


def test_load_names_the_missing_entry(library):
    with pytest.raises(xlac.ArtifactError, match=r"no entry 'nope' \(entries: main, total\)"):
        xlac.load(library, entry="nope")


def test_serialize_round_trip():
    exe = xlac.compile(TWO_ENTRIES, entry="total")
    blob = exe.serialize()
    again = xlac.deserialize(blob, entry="total")
    for got, want in zip(again.run(M), exe.run(M)):
        np.testing.assert_array_equal(got, want)
    assert again.signature == exe.signature and again.serialize() == blob


def _rewritten(blob: bytes, **changes) -> bytes:
    """The same library with changed metadata, as if built somewhere else."""
    library, metadata = artifact.unpack(blob)
    return artifact.pack(library, metadata | changes)


def test_artifact_from_another_xlac_version_is_refused():
    blob = _rewritten(xlac.compile(TWO_ENTRIES).serialize(), xlac="0.0.1")
    with pytest.raises(xlac.ArtifactError,
                       match=r"xlac version '0\.0\.1' \(this is '" + re.escape(xlac.__version__)):
        xlac.deserialize(blob)


def test_artifact_for_another_cpu_is_refused():
    blob = xlac.compile(TWO_ENTRIES).serialize()
    _, metadata = artifact.unpack(blob)
    foreign = _rewritten(blob, cpu_features=metadata["cpu_features"] + ["amx_fp64_future"])
    with pytest.raises(xlac.ArtifactError, match="CPU features this CPU lacks: amx_fp64_future"):
        xlac.deserialize(foreign)


@pytest.mark.parametrize("damage, message", [
    (lambda b: b[:len(b) // 2], "not an xlac artifact"),
    (lambda b: b[:100] + bytes([b[100] ^ 1]) + b[101:], "checksum mismatch"),
    (lambda b: b"\x7fELF" + b"\0" * 64, "not an xlac artifact"),
])
def test_damaged_artifacts_are_refused(damage, message):
    blob = xlac.compile(TWO_ENTRIES).serialize()
    with pytest.raises(xlac.ArtifactError, match=message):
        xlac.deserialize(damage(blob))


def test_xla_compile_bad_input_is_one_line(tmp_path):
    (tmp_path / "bad.mlir").write_text("func.func @main(")
    done = xla_compile(str(tmp_path / "bad.mlir"), "-o", str(tmp_path / "bad.so"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "bad.mlir:1:" in done.stderr and not (tmp_path / "bad.so").exists()


def test_c_example_builds_links_and_prints_the_right_numbers(tmp_path):
    """examples/aot_c through CMake: xlac_add_aot_library, a C program, its output."""
    cmake = shutil.which("cmake")
    if cmake is None or shutil.which("cc") is None:
        pytest.skip("cmake or a C compiler is not installed")
    build = tmp_path / "build"
    for command in ([cmake, "-S", str(REPO / "examples" / "aot_c"), "-B", str(build),
                     f"-DXLAC_COMPILE={BIN / 'xla-compile'}"],
                    [cmake, "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
    run = subprocess.run([str(build / "aot_example")], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:6] == ["entry main: 3 inputs, 2 outputs", "input[0]: f32[2,4] 32 bytes",
                         "input[1]: f32[4,3] 48 bytes", "input[2]: f32[3] 12 bytes",
                         "output[0]: f32[2,3] 24 bytes", "output[1]: f32[2] 8 bytes"]
    printed = np.array([float(line.split("=")[1]) for line in lines[6:]])
    x = (0.1 * np.arange(8, dtype=np.float32) - 0.5).reshape(2, 4)
    w = (0.05 * np.arange(12, dtype=np.float32) - 0.3).reshape(4, 3)
    b = 0.1 * np.arange(3, dtype=np.float32)
    y = np.tanh(x @ w + b)
    np.testing.assert_allclose(printed, np.concatenate([y.ravel(), y.sum(1)]), atol=2e-6)
